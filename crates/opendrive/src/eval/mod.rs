//! Evaluation of a road: reference line, elevation, superelevation, lane offset and lane
//! borders as functions of `s`, the road frame `(s, t, h) -> (x, y, z)` and its inverse.
//!
//! Record lookup follows the standard and libOpenDRIVE: at `s` the record with the largest start
//! `<= s` applies (so at a joint the next record wins); before the first record the first one
//! is extended.
//!
//! # Units
//! Metres and radians in the file's frame (header `<offset>` not applied).

mod curve;
mod inverse;
pub mod marks;
mod quad;
mod surface;

pub use curve::{Curve, Pose};
pub use inverse::StCandidate;
pub use surface::SurfaceTable;

use crate::model::{Lane, LaneSection, Poly3, Road};
use std::sync::OnceLock;

/// A road prepared for evaluation. Cheap to build (parametric cubics get an arc-length table);
/// the spatial index for [`RoadEval::xy_to_st`] is built on first use.
#[derive(Debug)]
pub struct RoadEval<'a> {
    road: &'a Road,
    curves: Vec<Curve>,
    index: OnceLock<inverse::SegmentIndex>,
}

/// The point frame at `(s, t, h)`: position and the unit vectors of s, t and h.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Position (x, y, z), m.
    pub position: [f64; 3],
    /// Unit tangent along the road (with the grade).
    pub e_s: [f64; 3],
    /// Unit lateral vector (left), rolled by the superelevation.
    pub e_t: [f64; 3],
    /// Unit surface normal.
    pub e_h: [f64; 3],
}

/// Value of a piecewise cubic profile at `s` (0 where there are no records).
pub fn profile_value(records: &[Poly3], s: f64) -> f64 {
    record_at(records, s, |r| r.s).map_or(0.0, |r| r.value(s - r.s))
}

/// First derivative of a piecewise cubic profile at `s`.
pub fn profile_slope(records: &[Poly3], s: f64) -> f64 {
    record_at(records, s, |r| r.s).map_or(0.0, |r| r.slope(s - r.s))
}

fn profile_second(records: &[Poly3], s: f64) -> f64 {
    record_at(records, s, |r| r.s).map_or(0.0, |r| r.curvature_term(s - r.s))
}

/// The record with the largest start `<= s`, or the first one before it starts.
pub(crate) fn record_at<T>(records: &[T], s: f64, start: impl Fn(&T) -> f64) -> Option<&T> {
    records.get(record_index(records, s, start))
}

/// The index of [`record_at`]'s record (0 when there are none).
fn record_index<T>(records: &[T], s: f64, start: impl Fn(&T) -> f64) -> usize {
    records.partition_point(|r| start(r) <= s).max(1) - 1
}

/// Whether `records` come in order of their starts (then a search can start from the last one).
fn in_order(records: &[Poly3]) -> bool {
    records.windows(2).all(|w| w[0].s <= w[1].s)
}

/// Like [`record_at`], starting from the record found last (`*hint`; `usize::MAX`: records not
/// in order of their starts, always searched): points of a scan and rows of a grid come in
/// order along s, so the record rarely changes; the same record as [`record_at`] for every `s`
/// (NaN included), the search only when the hint misses.
fn record_near<'r, T>(records: &'r [T], hint: &mut usize, s: f64, start: impl Fn(&T) -> f64) -> Option<&'r T> {
    let k = *hint;
    if k == usize::MAX {
        return record_at(records, s, start);
    }
    if k < records.len() {
        let after_start = k == 0 || start(&records[k]) <= s;
        let before_next = k + 1 == records.len() || s < start(&records[k + 1]);
        if after_start && before_next {
            return Some(&records[k]);
        }
    }
    *hint = record_index(records, s, start);
    records.get(*hint)
}

/// The road's surface profiles evaluated at s values near each other, remembering the records
/// found last: the same values as [`RoadEval::elevation`] and
/// [`RoadEval::planar_cross_slope`], without a search per call. One per thread.
#[derive(Debug, Clone)]
pub struct ProfileCursor<'a> {
    elevations: &'a [Poly3],
    superelevations: &'a [Poly3],
    at: (usize, usize),
    /// The last superelevation and its tangent (a constant record's points need one).
    tan: (f64, f64),
}

impl ProfileCursor<'_> {
    /// Elevation at `s`, m.
    pub fn elevation(&mut self, s: f64) -> f64 {
        record_near(self.elevations, &mut self.at.0, s, |r| r.s).map_or(0.0, |r| r.value(s - r.s))
    }

    /// Elevation at `s` and the height change per metre of planar t there (see
    /// [`RoadEval::planar_cross_slope`]).
    pub fn surface(&mut self, s: f64) -> (f64, f64) {
        let e = record_near(self.elevations, &mut self.at.0, s, |r| r.s);
        let (z, grade) = e.map_or((0.0, 0.0), |r| (r.value(s - r.s), r.slope(s - r.s)));
        let roll = record_near(self.superelevations, &mut self.at.1, s, |r| r.s).map_or(0.0, |r| r.value(s - r.s));
        if roll.to_bits() != self.tan.0.to_bits() {
            self.tan = (roll, roll.tan());
        }
        (z, cross_slope_of_tan(self.tan.1, grade))
    }
}

impl<'a> RoadEval<'a> {
    /// A cursor over the road's elevation and superelevation (see [`ProfileCursor`]).
    pub fn profile_cursor(&self) -> ProfileCursor<'a> {
        let (elevations, superelevations) =
            (&self.road.elevation_profile.elevations, &self.road.lateral_profile.superelevations);
        let hint = |r: &[Poly3]| if in_order(r) { 0 } else { usize::MAX };
        ProfileCursor { elevations, superelevations, at: (hint(elevations), hint(superelevations)), tan: (0.0, 0.0) }
    }

    /// Prepares `road`.
    pub fn new(road: &'a Road) -> RoadEval<'a> {
        let curves = road.plan_view.geometries.iter().map(Curve::new).collect();
        RoadEval { road, curves, index: OnceLock::new() }
    }

    /// The road.
    pub fn road(&self) -> &'a Road {
        self.road
    }

    /// Road length, m.
    pub fn length(&self) -> f64 {
        self.road.length
    }

    /// The prepared geometry record that applies at `s`.
    pub fn curve_at(&self, s: f64) -> Option<&Curve> {
        record_at(&self.curves, s, |c| c.s0)
    }

    /// Reference line x, y, heading and curvature at `s`. A road without geometry gives the
    /// origin.
    pub fn pose(&self, s: f64) -> Pose {
        self.curve_at(s).map_or(Pose::default(), |c| c.pose(s - c.s0))
    }

    /// Reference line elevation z at `s`, m.
    pub fn elevation(&self, s: f64) -> f64 {
        profile_value(&self.road.elevation_profile.elevations, s)
    }

    /// Superelevation (roll) at `s`, rad; positive lowers the right side.
    pub fn superelevation(&self, s: f64) -> f64 {
        profile_value(&self.road.lateral_profile.superelevations, s)
    }

    /// Grade (dz/ds of the elevation) at `s`.
    pub fn grade(&self, s: f64) -> f64 {
        profile_slope(&self.road.elevation_profile.elevations, s)
    }

    /// Height change per metre of planar t across the road at `s`: where the superelevated
    /// lateral axis meets the vertical through the point t along the horizontal normal,
    /// tan(superelevation)/√(1 + grade²). The surface seen in planar (s, t), as a CRG
    /// places it, is elevation(s) + t·this.
    pub fn planar_cross_slope(&self, s: f64) -> f64 {
        planar_cross_slope(self.superelevation(s), self.grade(s))
    }

    /// Lane offset at `s`, m.
    pub fn lane_offset(&self, s: f64) -> f64 {
        profile_value(&self.road.lanes.lane_offsets, s)
    }

    /// The lane section that applies at `s`.
    pub fn lane_section(&self, s: f64) -> Option<&'a LaneSection> {
        record_at(&self.road.lanes.lane_sections, s, |l| l.s)
    }

    /// t of the outer border of every lane (centre lane excluded) at `s`, ordered by lane id:
    /// `laneOffset + Σ ±width` from the centre outward; lanes given by `<border>` take the
    /// border polynomial (t relative to the reference line) instead.
    pub fn lane_borders(&self, s: f64) -> Vec<(i32, f64)> {
        let mut out = Vec::new();
        let Some(sec) = self.lane_section(s) else { return out };
        let offset = self.lane_offset(s);
        let ds_section = s - sec.s;
        for (side, sign) in [(&sec.right, -1.0), (&sec.left, 1.0)] {
            let Some(side) = side else { continue };
            let mut lanes: Vec<&Lane> = side.lanes.iter().filter(|l| l.id != 0).collect();
            lanes.sort_by_key(|l| l.id.abs());
            let mut t = offset;
            let mut side_out = Vec::with_capacity(lanes.len());
            for lane in lanes {
                if !lane.borders.is_empty() && lane.widths.is_empty() {
                    t = record_at(&lane.borders, ds_section, |r| r.s).map_or(t, |r| r.value(ds_section - r.s));
                } else {
                    let w = record_at(&lane.widths, ds_section, |r| r.s).map_or(0.0, |r| r.value(ds_section - r.s));
                    t += sign * w;
                }
                side_out.push((lane.id, t));
            }
            if sign < 0.0 {
                side_out.reverse();
            }
            out.extend(side_out);
        }
        out
    }

    /// The frame at `(s, t, h)`: the reference point lifted by the elevation, `e_s` along the
    /// 3-D tangent, `e_t` the horizontal left normal rolled by the superelevation about `e_s`,
    /// `e_h = e_s × e_t`; position = p0 + t·e_t + h·e_h. This is the construction of the
    /// standard's road frame as libOpenDRIVE implements it. Lane height and `<shape>` are not
    /// applied.
    pub fn frame(&self, s: f64, t: f64, h: f64) -> Frame {
        let pose = self.pose(s);
        let z = self.elevation(s);
        let grade = profile_slope(&self.road.elevation_profile.elevations, s);
        let phi = self.superelevation(s);
        let (sin_h, cos_h) = pose.hdg.sin_cos();
        let e_s = normalize([cos_h, sin_h, grade]);
        let (sin_p, cos_p) = phi.sin_cos();
        let e_t = normalize([
            cos_p * -e_s[1] + sin_p * -e_s[2] * e_s[0],
            cos_p * e_s[0] + sin_p * -e_s[2] * e_s[1],
            sin_p * (e_s[0] * e_s[0] + e_s[1] * e_s[1]),
        ]);
        let e_h = normalize(cross(e_s, e_t));
        let position =
            [pose.x + t * e_t[0] + h * e_h[0], pose.y + t * e_t[1] + h * e_h[1], z + t * e_t[2] + h * e_h[2]];
        Frame { position, e_s, e_t, e_h }
    }

    /// Where the road-frame point (s, t, 0) lies across the road in plan: its distance from the
    /// reference point along the horizontal left normal at `s` (the frame a CRG's v and the
    /// planar t run in). On a road banked by φ it is about t cos φ (a lane border of a 60°
    /// banked track lies at half its t in plan); without superelevation it is t.
    pub fn planar_t(&self, s: f64, t: f64) -> f64 {
        if self.superelevation(s) == 0.0 {
            return t;
        }
        let f = self.frame(s, t, 0.0);
        let p = self.pose(s);
        let (sn, cs) = p.hdg.sin_cos();
        (f.position[0] - p.x) * -sn + (f.position[1] - p.y) * cs
    }

    /// Map (x, y, z) of the road-frame point (s, t, h). See [`RoadEval::frame`].
    pub fn sth_to_xyz(&self, s: f64, t: f64, h: f64) -> [f64; 3] {
        self.frame(s, t, h).position
    }

    /// Terms for the inverse: pose, grade, grade rate, roll and roll rate at `s`.
    fn inverse_terms(&self, s: f64) -> inverse::Terms {
        let e = &self.road.elevation_profile.elevations;
        let se = &self.road.lateral_profile.superelevations;
        inverse::Terms {
            pose: self.pose(s),
            grade: profile_slope(e, s),
            grade_rate: profile_second(e, s),
            roll: profile_value(se, s),
            roll_rate: profile_slope(se, s),
        }
    }
}

fn normalize(v: [f64; 3]) -> [f64; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if n > 0.0 {
        [v[0] / n, v[1] / n, v[2] / n]
    } else {
        v
    }
}

/// See [`RoadEval::planar_cross_slope`]: from the superelevation (rad) and the grade.
fn planar_cross_slope(superelevation: f64, grade: f64) -> f64 {
    cross_slope_of_tan(superelevation.tan(), grade)
}

/// [`planar_cross_slope`] from the tangent of the superelevation: tan / √(1 + grade²). Up to a
/// grade of 0.1 by the binomial series of 1/√(1 + g²) to g¹⁰, which leaves 2.3e-13 of the value
/// (the division and square root were the latency of projecting a point onto the surface).
fn cross_slope_of_tan(tan_superelevation: f64, grade: f64) -> f64 {
    let g2 = grade * grade;
    if g2 <= 0.01 {
        // Grouped in pairs of terms (Estrin): a shorter chain of dependent operations.
        let (g4, g8) = (g2 * g2, g2 * g2 * (g2 * g2));
        let series = (1.0 - 0.5 * g2) + g4 * (3.0 / 8.0 - 5.0 / 16.0 * g2) + g8 * (35.0 / 128.0 - 63.0 / 256.0 * g2);
        tan_superelevation * series
    } else {
        tan_superelevation / (1.0 + g2).sqrt()
    }
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cross_slope_series_is_the_square_root_to_a_few_parts_in_1e13() {
        for k in -300..=300 {
            let grade = k as f64 * 0.0005; // -0.15..0.15, across where the series stops
            let want = 0.03 / (1.0 + grade * grade).sqrt();
            let got = cross_slope_of_tan(0.03, grade);
            assert!(((got - want) / want).abs() < 3e-13, "grade {grade}: {got} vs {want}");
        }
    }

    #[test]
    fn the_record_near_the_last_one_is_the_record_at_s() {
        let starts: [&[f64]; 4] = [&[], &[2.0], &[0.0, 0.0, 1.5, 4.0, 4.0, 10.0], &[0.0, 5.0, 3.0, 8.0]];
        let mut queries = vec![-1.0, 0.0, 0.7, 1.5, 1.49, 3.9, 4.0, 4.1, 12.0, 2.0, -0.0, 9.99, 10.0];
        queries.extend([f64::NAN, f64::INFINITY, 0.2, f64::NEG_INFINITY, 4.0, 5.0, 3.5, 2.9, 8.5, 0.1]);
        queries.extend((0..200).map(|i| (i as f64 * 0.37).sin() * 8.0 + 4.0));
        for starts in starts {
            let sorted = starts.windows(2).all(|w| w[0] <= w[1]);
            let mut hint = if sorted { 0 } else { usize::MAX };
            for &s in &queries {
                let want = record_at(starts, s, |&x| x).map(|r| r as *const f64);
                let got = record_near(starts, &mut hint, s, |&x| x).map(|r| r as *const f64);
                assert_eq!(got, want, "starts {starts:?}, s {s}");
            }
        }
    }
}
