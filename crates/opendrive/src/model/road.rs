use super::{Extras, Geometry, Lanes, Objects, Poly3, Signals};

/// A `<road>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Road {
    /// Unique id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// Length of the reference line, m.
    pub length: f64,
    /// Junction id, "-1" outside junctions.
    pub junction: String,
    /// Traffic rule, "RHT" or "LHT" (optional; RHT when absent).
    pub rule: Option<String>,
    /// `<link>`.
    pub link: Option<RoadLink>,
    /// `<type>` records.
    pub types: Vec<RoadType>,
    /// `<planView>`.
    pub plan_view: PlanView,
    /// `<elevationProfile>`.
    pub elevation_profile: ElevationProfile,
    /// `<lateralProfile>`.
    pub lateral_profile: LateralProfile,
    /// `<lanes>`.
    pub lanes: Lanes,
    /// `<objects>`.
    pub objects: Objects,
    /// `<signals>`.
    pub signals: Signals,
    /// `<surface>`.
    pub surface: Surface,
    /// Unknown attributes and children (`railroad`, `userData`, ...).
    pub extras: Extras,
}

/// `<planView>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanView {
    /// Geometry records in ascending s.
    pub geometries: Vec<super::Geometry>,
    /// Unknown children.
    pub extras: Extras,
}

impl PlanView {
    /// Appends a record starting where the last one ends: its `s` is the exact sum of the
    /// previous lengths (from the first record's `s`), so the chain has no bookkeeping gaps.
    pub fn push(&mut self, mut geometry: Geometry) {
        geometry.s = self.geometries.last().map_or(geometry.s, |g| g.s + g.length);
        self.geometries.push(geometry);
    }
    /// The s where the last record ends.
    pub fn end_s(&self) -> f64 {
        self.geometries.last().map_or(0.0, |g| g.s + g.length)
    }
}

/// `<elevationProfile>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ElevationProfile {
    /// `<elevation>` records, z(ds) in m.
    pub elevations: Vec<Poly3>,
    /// Unknown children.
    pub extras: Extras,
}

/// `<lateralProfile>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LateralProfile {
    /// `<superelevation>` records: roll angle in rad, positive = the right side (t < 0) lower.
    pub superelevations: Vec<Poly3>,
    /// `<shape>` records.
    pub shapes: Vec<Shape>,
    /// Unknown children (`crossfall` of 1.4, ...).
    pub extras: Extras,
}

/// A `<shape>` record: h(dt) = a + b·dt + c·dt² + d·dt³ at fixed `s`, dt = t − `t`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Shape {
    /// m.
    pub s: f64,
    /// m.
    pub t: f64,
    /// Coefficients.
    pub a: f64,
    /// Coefficients.
    pub b: f64,
    /// Coefficients.
    pub c: f64,
    /// Coefficients.
    pub d: f64,
}

/// Road `<link>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoadLink {
    /// `<predecessor>`.
    pub predecessor: Option<LinkTarget>,
    /// `<successor>`.
    pub successor: Option<LinkTarget>,
    /// Unknown children.
    pub extras: Extras,
}

/// A road `<predecessor>` / `<successor>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkTarget {
    /// "road" or "junction".
    pub element_type: String,
    /// Id of the linked road or junction.
    pub element_id: String,
    /// "start" or "end" (roads only).
    pub contact_point: Option<String>,
    /// Unknown attributes (elementS, elementDir) and children.
    pub extras: Extras,
}

/// A road `<type>` record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoadType {
    /// Start s, m.
    pub s: f64,
    /// The type (town, rural, motorway, ...).
    pub kind: String,
    /// Country code.
    pub country: Option<String>,
    /// `<speed max unit>`: max as written (a number or "no limit"), unit (m/s, km/h, mph).
    pub speed: Option<(String, Option<String>)>,
    /// Unknown attributes and children.
    pub extras: Extras,
}

/// `<surface>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surface {
    /// `<CRG>` records.
    pub crgs: Vec<RoadCrg>,
    /// Unknown children.
    pub extras: Extras,
}

/// Road `<surface><CRG>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoadCrg {
    /// CRG file name.
    pub file: String,
    /// Start of the road range it covers, m.
    pub s_start: f64,
    /// End of the road range it covers, m.
    pub s_end: f64,
    /// "same" or "opposite".
    pub orientation: String,
    /// "attached", "attached0", "genuine" or "global".
    pub mode: String,
    /// "elevation" or "friction".
    pub purpose: Option<String>,
    /// m.
    pub s_offset: Option<f64>,
    /// m.
    pub t_offset: Option<f64>,
    /// m.
    pub z_offset: Option<f64>,
    /// Factor.
    pub z_scale: Option<f64>,
    /// rad.
    pub h_offset: Option<f64>,
    /// Unknown attributes and children.
    pub extras: Extras,
}
