use super::{Extras, Poly3};

/// `<lanes>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lanes {
    /// `<laneOffset>` records (shift of the centre lane from the reference line, m).
    pub lane_offsets: Vec<Poly3>,
    /// `<laneSection>`s in ascending s.
    pub lane_sections: Vec<LaneSection>,
    /// Unknown children.
    pub extras: Extras,
}

/// A `<laneSection>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneSection {
    /// Start s, m.
    pub s: f64,
    /// `singleSide`.
    pub single_side: Option<bool>,
    /// `<left>`: lanes 1, 2, ... (any order in the file, kept as read).
    pub left: Option<LaneSide>,
    /// `<center>`: lane 0.
    pub center: Option<LaneSide>,
    /// `<right>`: lanes -1, -2, ...
    pub right: Option<LaneSide>,
    /// Unknown attributes and children.
    pub extras: Extras,
}

impl LaneSection {
    /// All lanes of the section, left, center, right.
    pub fn lanes(&self) -> impl Iterator<Item = &Lane> {
        [&self.left, &self.center, &self.right].into_iter().flatten().flat_map(|side| side.lanes.iter())
    }
}

/// `<left>`, `<center>` or `<right>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneSide {
    /// The lanes.
    pub lanes: Vec<Lane>,
    /// Unknown children.
    pub extras: Extras,
}

/// A `<lane>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lane {
    /// Id: 0 centre, positive left, negative right.
    pub id: i32,
    /// `type` (driving, sidewalk, border, ...); required except on the centre lane.
    pub kind: Option<String>,
    /// `level`: true keeps the lane out of superelevation.
    pub level: Option<bool>,
    /// `<link>`.
    pub link: Option<LaneLink>,
    /// `<width>` records (s = sOffset from the section start), m.
    pub widths: Vec<Poly3>,
    /// `<border>` records (s = sOffset), t of the outer border, m.
    pub borders: Vec<Poly3>,
    /// `<roadMark>` records.
    pub road_marks: Vec<RoadMark>,
    /// `<material>` records.
    pub materials: Vec<LaneMaterial>,
    /// `<speed>` records.
    pub speeds: Vec<LaneSpeed>,
    /// `<height>` records.
    pub heights: Vec<LaneHeight>,
    /// Unknown attributes and children (`access`, `rule`, `userData`, ...).
    pub extras: Extras,
}

/// Lane `<link>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneLink {
    /// Predecessor lane ids.
    pub predecessors: Vec<i32>,
    /// Successor lane ids.
    pub successors: Vec<i32>,
    /// Unknown children.
    pub extras: Extras,
}

/// A `<roadMark>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoadMark {
    /// m from the section start.
    pub s_offset: f64,
    /// `type`: none, solid, broken, solid solid, ...
    pub kind: String,
    /// standard or bold.
    pub weight: Option<String>,
    /// `color` (required in 1.8; "standard" when a file omits it).
    pub color: String,
    /// Material.
    pub material: Option<String>,
    /// m.
    pub width: Option<f64>,
    /// increase, decrease, both, none.
    pub lane_change: Option<String>,
    /// m.
    pub height: Option<f64>,
    /// Unknown attributes and children (`type`/`line`, `sway`, `explicit`).
    pub extras: Extras,
}

/// A lane `<material>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneMaterial {
    /// m.
    pub s_offset: f64,
    /// Surface material code.
    pub surface: Option<String>,
    /// Friction coefficient.
    pub friction: f64,
    /// Roughness.
    pub roughness: Option<f64>,
    /// Unknown attributes.
    pub extras: Extras,
}

/// A lane `<speed>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneSpeed {
    /// m.
    pub s_offset: f64,
    /// In `unit`.
    pub max: f64,
    /// m/s, km/h, mph.
    pub unit: Option<String>,
    /// Unknown attributes.
    pub extras: Extras,
}

/// A lane `<height>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneHeight {
    /// m.
    pub s_offset: f64,
    /// m.
    pub inner: f64,
    /// m.
    pub outer: f64,
    /// Unknown attributes.
    pub extras: Extras,
}
