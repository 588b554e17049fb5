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

use opendrive::{Placement, RoadEval};

const STEP: f64 = 0.05;

/// Most entries a frame's table may have: 20 M, 1000 km of reference line at 5 cm, about
/// 1.2 GB with its index. A road's declared length alone never sizes a table: see
/// [`RoadFrame::covering`].
pub const MAX_ENTRIES: usize = 20_000_000;

/// Why a [`RoadFrame`] cannot be built.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FrameError {
    /// The part of the reference line needed would take more than [`MAX_ENTRIES`] entries.
    TooLarge {
        /// Road id.
        road: String,
        /// The road's declared length, m.
        length: f64,
        /// The s range the table would have to cover, m.
        s_range: (f64, f64),
    },
    /// The bounding box or reach given is not finite or is inverted.
    BadBox(String),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLarge { road, length, s_range } => write!(
                f,
                "road {road} (length {length} m): its reference line from s={} to s={} m would take more than {} \
                 table entries at {STEP} m",
                s_range.0, s_range.1, MAX_ENTRIES
            ),
            FrameError::BadBox(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FrameError {}

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
    /// The s range the table covers (the whole road but for [`RoadFrame::covering`]); a foot
    /// point outside it is `None`. Empty (start > end) when no part of the road is needed.
    covered: (f64, f64),
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
    /// Tabulates the road's whole reference line. The table's size comes from the declared
    /// length alone: prefer [`RoadFrame::covering`] (only what the points can reach) or
    /// [`RoadFrame::try_new`] (the whole road, refused beyond [`MAX_ENTRIES`]) for roads read
    /// from files (the reader refuses lengths beyond `opendrive::MAX_STATION`, 1e7 m, which is
    /// still 200 M entries).
    pub fn new(road: &RoadEval) -> RoadFrame {
        Self::tabulate(road, 0.0, road.length())
    }

    /// [`RoadFrame::new`], or an error naming the road and its length when the table would
    /// exceed [`MAX_ENTRIES`] (or the length is not finite).
    pub fn try_new(road: &RoadEval) -> Result<RoadFrame, FrameError> {
        let length = road.length();
        Self::check_size(road, (0.0, length))?;
        Ok(Self::tabulate(road, 0.0, length))
    }

    /// The frame for points within the map-frame box `bbox` = [min x, min y, max x, max y]
    /// (as a LAS header gives it; `place` is the file's header `<offset>`, `HeaderOffset::default().placement()`
    /// without one) that the caller keeps only within `reach` metres of the reference line (the
    /// largest |t| of its band). The table covers only the s range of the reference line that
    /// comes within `reach` of the box (found by bisecting s, pruning the intervals that
    /// cannot reach it, so nothing reachable is missed: the work grows with the log of the
    /// length and the road's length near the box), so a long road costs what the points'
    /// extent needs. A point whose foot on the reference line lies outside that range
    /// (then farther than `reach` from the line) projects to `None`. A box no part of the
    /// road reaches gives a frame that projects every point to `None`. An error when the range
    /// would still take more than [`MAX_ENTRIES`] entries, or the box or reach is not finite.
    pub fn covering(road: &RoadEval, bbox: [f64; 4], place: &Placement, reach: f64) -> Result<RoadFrame, FrameError> {
        let [x0, y0, x1, y1] = bbox;
        let valid = bbox.iter().all(|v| v.is_finite()) && x0 <= x1 && y0 <= y1 && reach.is_finite() && reach >= 0.0;
        if !valid {
            return Err(FrameError::BadBox(format!(
                "road {}: bounding box {bbox:?} with reach {reach} m: needs finite min <= max and reach >= 0",
                road.road().id
            )));
        }
        // The box in the file frame: the bounding box of its turned corners.
        let corners = [[x0, y0], [x1, y0], [x0, y1], [x1, y1]].map(|[x, y]| place.to_file([x, y, 0.0]));
        let fb = corners.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, c| {
            [b[0].min(c[0]), b[1].min(c[1]), b[2].max(c[0]), b[3].max(c[1])]
        });
        let length = road.length();
        // Bisect s: every point of [a, b] lies within (b - a)/2 along the line (so also
        // straight) of the pose at its middle, so an interval whose middle is farther than
        // reach + (b - a)/2 from the box holds nothing reachable. Intervals are split down to
        // LEAF metres; the work is the depth (log2 of the length) times the intervals that
        // survive, a few per metre of road near the box, and stops once the range exceeds
        // MAX_ENTRIES.
        const LEAF: f64 = 1.0;
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut stack = vec![(0.0, length)];
        while let Some((a, b)) = stack.pop() {
            let (m, half) = (0.5 * (a + b), 0.5 * (b - a));
            let p = road.pose(m);
            let dx = (fb[0] - p.x).max(p.x - fb[2]).max(0.0);
            let dy = (fb[1] - p.y).max(p.y - fb[3]).max(0.0);
            let d = dx.hypot(dy);
            // A NaN pose holds nothing.
            if d.is_nan() || d > reach + half + STEP {
                continue;
            }
            if half <= 0.5 * LEAF {
                lo = lo.min(a);
                hi = hi.max(b);
                Self::check_size(road, (lo, hi))?;
                continue;
            }
            stack.push((m, b));
            stack.push((a, m));
        }
        if lo > hi {
            let mut f = Self::tabulate(road, 0.0, 0.0);
            f.covered = (f64::INFINITY, f64::NEG_INFINITY);
            return Ok(f);
        }
        let range = (lo.max(0.0), hi.min(length));
        Self::check_size(road, range)?;
        Ok(Self::tabulate(road, range.0, range.1))
    }

    /// [`RoadFrame::covering`] the points' map-frame box where it is known, else the whole
    /// road ([`RoadFrame::try_new`]).
    pub fn for_points(
        road: &RoadEval,
        bbox: Option<[f64; 4]>,
        place: &Placement,
        reach: f64,
    ) -> Result<RoadFrame, FrameError> {
        match bbox {
            Some(b) => Self::covering(road, b, place, reach),
            None => Self::try_new(road),
        }
    }

    fn check_size(road: &RoadEval, range: (f64, f64)) -> Result<(), FrameError> {
        let entries = (range.1 - range.0) / STEP;
        if entries.is_finite() && entries <= MAX_ENTRIES as f64 {
            return Ok(());
        }
        Err(FrameError::TooLarge { road: road.road().id.clone(), length: road.length(), s_range: range })
    }

    /// Tabulates the reference line from s0 to s1 (s1 >= s0), at the whole road's stations
    /// (multiples of the step from s = 0), so that a part projects as the whole.
    fn tabulate(road: &RoadEval, s0: f64, s1: f64) -> RoadFrame {
        let length = road.length();
        // A part ends on a station of the whole table too (or at the road's end).
        let s1 = if s1 < length { ((s1 / STEP).ceil() * STEP).min(length) } else { s1 };
        let k = (s0 / STEP).floor().max(0.0);
        let s0 = k * STEP;
        let n = ((s1 - s0) / STEP).ceil().max(1.0) as usize;
        let table = (0..=n)
            .map(|i| {
                let s = ((k + i as f64) * STEP).min(s1);
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
        RoadFrame { table, length, covered: (s0, s1), last: None, index, bounds }
    }

    /// Reference-line length, m.
    pub fn length(&self) -> f64 {
        self.length
    }

    /// The s range the table covers, m (empty, start > end, for a frame no point reaches).
    pub fn covered(&self) -> (f64, f64) {
        self.covered
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

    /// (s, t) when s lies on the road's covered part (to a nanometre), `None` beyond its ends.
    #[inline(always)]
    fn on_road(&self, s: f64, t: f64) -> Option<(f64, f64)> {
        let (a, b) = self.covered;
        (s >= a - 1e-9 && s <= b + 1e-9).then(|| (s.max(a).min(b), t))
    }

    /// [`RoadFrame::project_from`] for callers that keep only points with t within `band`:
    /// `None` also for a point the tangent of the entry nearest its foot puts more than
    /// `TANGENT_SLACK` (1 cm) outside the band. Most points of a survey (facades, trees) lie outside
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

    /// A straight road along +x, read at 1 km and then lengthened in memory (the reader refuses
    /// more than 1e7 m).
    fn straight(length: f64) -> opendrive::OpenDrive {
        let text = r#"<OpenDRIVE><header revMajor="1" revMinor="6"/><road id="r7" length="1000" junction="-1">
            <planView><geometry s="0" x="0" y="0" hdg="0" length="1000"><line/></geometry></planView>
            <lanes><laneSection s="0"><center><lane id="0" type="none"/></center></laneSection></lanes></road></OpenDRIVE>"#;
        let mut odr = opendrive::read(text).unwrap_or_default();
        odr.roads[0].length = length;
        odr.roads[0].plan_view.geometries[0].length = length;
        odr
    }

    #[test]
    fn a_long_road_is_tabulated_only_where_the_points_are() {
        // A 1e9 m road: a whole table was 20 G entries (1.1 TB); capacity overflow at 1e308.
        for length in [1e9, 1e308] {
            let odr = straight(length);
            let road = RoadEval::new(&odr.roads[0]);
            match RoadFrame::try_new(&road) {
                Err(e @ FrameError::TooLarge { .. }) => {
                    let m = e.to_string();
                    assert!(m.contains("road r7") && m.contains(&format!("length {length} m")), "{m}");
                }
                other => panic!("{length}: {other:?}"),
            }
            let place = opendrive::HeaderOffset::default().placement();
            let mut f =
                RoadFrame::covering(&road, [100.0, -10.0, 200.0, 10.0], &place, 10.0).unwrap_or_else(|e| panic!("{e}"));
            let (a, b) = f.covered();
            assert!(a <= 90.0 && b >= 210.0 && f.table.len() < 5_000, "{a}..{b}, {} entries", f.table.len());
            let (s, t) = f.project(150.0, 3.0).unwrap_or_default();
            assert!((s - 150.0).abs() < 1e-9 && (t - 3.0).abs() < 1e-9, "{s} {t}");
            // Nothing of the road near: every point is off it.
            let mut far =
                RoadFrame::covering(&road, [0.0, 500.0, 10.0, 510.0], &place, 10.0).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(far.project(5.0, 5005.0), None);
            assert!(far.covered().0 > far.covered().1);
        }
        let road_odr = straight(1e9);
        let road = RoadEval::new(&road_odr.roads[0]);
        // A box along 5e6 m of it still needs 1e8 entries: refused, naming the road.
        let big =
            RoadFrame::covering(&road, [0.0, -1.0, 5e6, 1.0], &opendrive::HeaderOffset::default().placement(), 1.0);
        assert!(matches!(big, Err(FrameError::TooLarge { ref road, .. }) if road == "r7"), "{big:?}");
        let bad =
            RoadFrame::covering(&road, [f64::NAN, 0.0, 1.0, 1.0], &opendrive::HeaderOffset::default().placement(), 1.0);
        assert!(matches!(bad, Err(FrameError::BadBox(_))), "{bad:?}");
    }

    #[test]
    fn a_covering_frame_projects_as_the_whole_one_within_its_reach() {
        let odr = opendrive::read(sim::scene::DEMO_XODR).unwrap_or_default();
        let road = RoadEval::new(&odr.roads[0]);
        let whole = RoadFrame::new(&road);
        // A header offset, so that the box is turned into the file frame.
        let place = opendrive::HeaderOffset { x: 650_000.0, y: 240_000.0, z: 0.0, hdg: 0.3 }.placement();
        let pts: Vec<[f64; 3]> = (0..400)
            .map(|i| {
                let (s, t) = (40.0 + i as f64 * 0.05, (i % 21) as f64 * 0.5 - 5.0);
                place.to_map(road.sth_to_xyz(s, t, 0.0))
            })
            .collect();
        let bbox = pts.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
            [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])]
        });
        let part = RoadFrame::covering(&road, bbox, &place, 6.0).unwrap_or_else(|e| panic!("{e}"));
        assert!(part.table.len() * 2 < whole.table.len(), "{} of {}", part.table.len(), whole.table.len());
        let (mut l1, mut l2) = (None, None);
        for p in &pts {
            let [x, y, _] = place.to_file(*p);
            let a = whole.project_from(&mut l1, x, y);
            let b = part.project_from(&mut l2, x, y);
            let (a, b) = (a.unwrap_or_default(), b.unwrap_or_else(|| panic!("({x}, {y}) not covered")));
            assert!((a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9, "{a:?} {b:?}");
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
