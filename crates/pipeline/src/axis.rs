//! An OpenDRIVE road from axis vertices in the map frame: the reference line fitted as lines,
//! arcs and clothoids (`opendrive::fit`), the elevation fitted as cubic records where the
//! vertices have heights, a local origin in the header's `<offset>`, the CRS in
//! `<geoReference>`, and one lane each side so that simulators can drive it.

use opendrive::fit::{fit_noisy_profile, fit_polyline, AxisFit, FitError, FitOptions, ProfileFit};
use opendrive::{
    Extras, Header, HeaderOffset, Lane, LaneSection, LaneSide, Lanes, OpenDrive, PlanView, Poly3, Road, RoadMark,
};

/// How to build the road.
#[derive(Debug, Clone)]
pub struct AxisOptions {
    /// Plan-view and elevation fit.
    pub fit: FitOptions,
    /// Road id.
    pub road_id: String,
    /// Width of the one driving lane on each side, m.
    pub lane_width: f64,
    /// `<geoReference>` text (EPSG code, PROJ string or WKT), if the CRS is known.
    pub geo_reference: Option<String>,
    /// Height to subtract from the vertices' z for the road's elevation (a trajectory's
    /// sensor height above the road), m.
    pub z_offset: f64,
}

impl Default for AxisOptions {
    fn default() -> Self {
        AxisOptions {
            fit: FitOptions::default(),
            road_id: "1".into(),
            lane_width: 3.5,
            geo_reference: None,
            z_offset: 0.0,
        }
    }
}

/// The road and how well it fits.
#[derive(Debug, Clone)]
pub struct AxisRoad {
    /// A file with one road.
    pub odr: OpenDrive,
    /// The plan-view fit, in the file frame (map minus `origin`).
    pub plan: AxisFit,
    /// The elevation fit, when the vertices had heights.
    pub elevation: Option<ProfileFit>,
    /// The map coordinates of the file frame's origin (the header's `<offset>`).
    pub origin: [f64; 3],
}

impl AxisRoad {
    /// Whether the plan view lies within `tolerance` of the local estimate of the true line
    /// (of every vertex where they are exact; [`AxisFit::within`]), and the elevation, where
    /// there is one, within `tolerance` of the heights.
    pub fn within(&self, tolerance: f64) -> bool {
        self.plan.within(tolerance) && self.elevation.as_ref().is_none_or(|e| e.max <= tolerance)
    }
}

/// The local origin of a polyline: its first vertex rounded down to 100 m, its lowest height
/// (or 0) rounded down to 10 m, as the voxel products choose theirs.
pub fn origin_of(xyz: &[[f64; 3]]) -> [f64; 3] {
    let first = xyz.first().copied().unwrap_or([0.0; 3]);
    let z = xyz.iter().map(|p| p[2]).filter(|z| z.is_finite()).fold(f64::INFINITY, f64::min);
    let z = if z.is_finite() { (z / 10.0).floor() * 10.0 } else { 0.0 };
    [(first[0] / 100.0).floor() * 100.0, (first[1] / 100.0).floor() * 100.0, z]
}

/// Fits the road to `xyz` (map frame, in order; z NaN where unknown).
pub fn build_axis(xyz: &[[f64; 3]], opts: &AxisOptions) -> Result<AxisRoad, FitError> {
    let origin = origin_of(xyz);
    let local: Vec<[f64; 2]> = xyz.iter().map(|p| [p[0] - origin[0], p[1] - origin[1]]).collect();
    let plan = fit_polyline(&local, &opts.fit)?;
    let has_z = !xyz.is_empty() && xyz.iter().all(|p| p[2].is_finite());
    let elevation = if has_z {
        // Heights at the vertices' stations, in ascending s.
        let mut sz: Vec<(f64, f64)> =
            plan.stations.iter().zip(xyz).map(|(st, p)| (st[0], p[2] - opts.z_offset - origin[2])).collect();
        sz.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (s, z): (Vec<f64>, Vec<f64>) = sz.into_iter().unzip();
        Some(fit_noisy_profile(&s, &z, &opts.fit)?)
    } else {
        None
    };
    let length = plan.geometries.iter().map(|g| g.length).sum::<f64>();
    let mut plan_view = PlanView::default();
    for g in &plan.geometries {
        plan_view.push(g.clone());
    }
    let elevations = match &elevation {
        // OpenDRIVE's profile starts at s = 0, the fit at the first station.
        Some(e) => e.from_zero(),
        None => vec![Poly3 { s: 0.0, a: 0.0, b: 0.0, c: 0.0, d: 0.0 }],
    };
    let lane = |id: i32| Lane {
        id,
        kind: Some("driving".into()),
        level: Some(false),
        widths: vec![Poly3 { s: 0.0, a: opts.lane_width, b: 0.0, c: 0.0, d: 0.0 }],
        road_marks: vec![mark("solid")],
        ..Default::default()
    };
    let centre = Lane { id: 0, kind: Some("none".into()), road_marks: vec![mark("broken")], ..Default::default() };
    let section = LaneSection {
        s: 0.0,
        left: Some(LaneSide { lanes: vec![lane(1)], extras: Extras::default() }),
        center: Some(LaneSide { lanes: vec![centre], extras: Extras::default() }),
        right: Some(LaneSide { lanes: vec![lane(-1)], extras: Extras::default() }),
        ..Default::default()
    };
    let mut road = Road {
        id: opts.road_id.clone(),
        length,
        junction: "-1".into(),
        plan_view,
        lanes: Lanes { lane_sections: vec![section], ..Default::default() },
        ..Default::default()
    };
    road.elevation_profile.elevations = elevations;
    road.lateral_profile.superelevations = vec![Poly3 { s: 0.0, a: 0.0, b: 0.0, c: 0.0, d: 0.0 }];
    let header = Header {
        name: Some("roadscan axis".into()),
        vendor: Some("roadscan".into()),
        geo_reference: opts.geo_reference.clone(),
        offset: Some(HeaderOffset { x: origin[0], y: origin[1], z: origin[2], hdg: 0.0 }),
        ..Header::default()
    };
    let odr = OpenDrive { header, roads: vec![road], ..Default::default() };
    Ok(AxisRoad { odr, plan, elevation, origin })
}

/// The reference line of `road` in `odr` every `step` metres (and at its end), in the map
/// frame, with the road's elevation as z.
pub fn sample_road(odr: &OpenDrive, road: &Road, step: f64) -> Vec<[f64; 3]> {
    let eval = opendrive::RoadEval::new(road);
    let place = odr.header.offset.unwrap_or_default().placement();
    let n = ((road.length / step).ceil() as usize).max(1);
    (0..=n)
        .map(|i| {
            let s = (i as f64 * step).min(road.length);
            let pose = eval.pose(s);
            place.to_map([pose.x, pose.y, eval.elevation(s)])
        })
        .collect()
}

/// Checks that `text`, the written form of `built`, reads back with every record starting
/// where it was fitted (within 1 µm).
pub fn check_written(text: &str, built: &AxisRoad) -> Result<(), crate::Error> {
    let back = opendrive::read(text).map_err(|error| crate::Error::ReadBack { error })?;
    let road = back.roads.first().ok_or(crate::Error::ReadBackNoRoad)?;
    let eval = opendrive::RoadEval::new(road);
    for g in &built.plan.geometries {
        let p = eval.pose(g.s);
        let d = (p.x - g.x).hypot(p.y - g.y);
        if d > 1e-6 {
            return Err(crate::Error::ReadBackAway { s: g.s, distance: d });
        }
    }
    Ok(())
}

fn mark(kind: &str) -> RoadMark {
    RoadMark {
        s_offset: 0.0,
        kind: kind.into(),
        weight: Some("standard".into()),
        color: "standard".into(),
        width: Some(0.12),
        lane_change: Some(if kind == "solid" { "none" } else { "both" }.into()),
        ..Default::default()
    }
}
