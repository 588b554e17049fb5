//! Projection of map points into surface candidates: each point to the road's (s, t) frame from its
//! predecessor, kept when within the grid's margins and `max_height` of the OpenDRIVE surface, or
//! aside (far) within `search_height` of it.

use super::spill::Candidate;
use crate::frame::RoadFrame;
use opendrive::{Placement, RoadEval};

/// The road, its frame and the grid's extent: what projecting points into candidates needs
/// (shared by the projection threads).
pub(super) struct Project<'a> {
    pub(super) road: RoadEval<'a>,
    /// The road's surface as cubic pieces (`None`: records out of order, searched instead).
    pub(super) surface: Option<opendrive::SurfaceTable>,
    pub(super) frame: RoadFrame,
    pub(super) place: Placement,
    pub(super) v_range: (f64, f64),
    pub(super) s_range: Option<(f64, f64)>,
    pub(super) margin: f64,
    pub(super) max_height: f64,
    /// Candidates farther than `max_height` but within this of the OpenDRIVE surface are kept
    /// aside (`far`), m.
    pub(super) search_height: f64,
}

impl Project<'_> {
    /// The surface candidates among a run of map points, in order, to `emit`: (s, t) from the
    /// reference line (the first point looked up, the others from their predecessor), kept when
    /// within the grid's margins and `max_height` of the OpenDRIVE surface, or (`far`: true)
    /// within `search_height` of it.
    pub(super) fn candidates(&self, x: &[f64], y: &[f64], z: &[f64], mut emit: impl FnMut(Candidate, bool)) {
        let margin = self.margin;
        let (vr, vl) = (self.v_range.0 - margin, self.v_range.1 + margin);
        let (s_lo, s_hi) = self.s_range.map_or((f64::NEG_INFINITY, f64::INFINITY), |(a, b)| (a - margin, b + margin));
        let mut last = None;
        let mut profile = self.road.profile_cursor();
        let mut piece = 0;
        for i in 0..x.len() {
            let [fx, fy, fz] = self.place.to_file([x[i], y[i], z[i]]);
            let Some((s, t)) = self.frame.project_within(&mut last, fx, fy, (vr, vl)) else { continue };
            if t < vr || t > vl || s < s_lo || s > s_hi {
                continue;
            }
            let (z, cross) = match &self.surface {
                Some(table) => table.at_from(&mut piece, s),
                None => profile.surface(s),
            };
            let h = fz - (z + t * cross);
            if h.abs() <= self.max_height {
                emit(Candidate { s, t: t as f32, h: h as f32 }, false);
            } else if h.abs() <= self.search_height {
                emit(Candidate { s, t: t as f32, h: h as f32 }, true);
            }
        }
    }
}
