use super::Extras;

/// `<objects>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Objects {
    /// `<object>`s.
    pub objects: Vec<Object>,
    /// Unknown children (`objectReference`, `tunnel`, `bridge`, ...).
    pub extras: Extras,
}

/// An `<object>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object {
    /// Id.
    pub id: String,
    /// m.
    pub s: f64,
    /// m.
    pub t: f64,
    /// m.
    pub z_offset: f64,
    /// `type`.
    pub kind: Option<String>,
    /// `subtype`.
    pub subtype: Option<String>,
    /// `name`.
    pub name: Option<String>,
    /// "+", "-" or "none".
    pub orientation: Option<String>,
    /// rad, relative to the road heading.
    pub hdg: Option<f64>,
    /// rad.
    pub pitch: Option<f64>,
    /// rad.
    pub roll: Option<f64>,
    /// m.
    pub length: Option<f64>,
    /// m.
    pub width: Option<f64>,
    /// m.
    pub height: Option<f64>,
    /// m.
    pub radius: Option<f64>,
    /// m.
    pub valid_length: Option<f64>,
    /// `<repeat>`s.
    pub repeats: Vec<Repeat>,
    /// `<outline>`s (1.4 puts one directly under `<object>`, 1.5+ under `<outlines>`).
    pub outlines: Vec<Outline>,
    /// `<surface><CRG>` (1.7+).
    pub crgs: Vec<ObjectCrg>,
    /// Unknown attributes and children (`material`, `validity`, `parkingSpace`, `markings`, ...).
    pub extras: Extras,
}

/// An object `<repeat>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repeat {
    /// m.
    pub s: f64,
    /// m.
    pub length: f64,
    /// m (0 = continuous).
    pub distance: f64,
    /// m.
    pub t_start: f64,
    /// m.
    pub t_end: f64,
    /// m.
    pub height_start: f64,
    /// m.
    pub height_end: f64,
    /// m.
    pub z_offset_start: f64,
    /// m.
    pub z_offset_end: f64,
    /// Unknown (optional) attributes such as widthStart, lengthEnd, radiusStart.
    pub extras: Extras,
}

/// An `<outline>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outline {
    /// `id`.
    pub id: Option<String>,
    /// `fillType`.
    pub fill_type: Option<String>,
    /// `outer`.
    pub outer: Option<bool>,
    /// `closed`.
    pub closed: Option<bool>,
    /// `laneType`.
    pub lane_type: Option<String>,
    /// Corners in order.
    pub corners: Vec<Corner>,
    /// Unknown attributes and children.
    pub extras: Extras,
}

/// An outline corner.
#[derive(Debug, Clone, PartialEq)]
pub enum Corner {
    /// `<cornerRoad s t dz height>`.
    Road {
        /// m.
        s: f64,
        /// m.
        t: f64,
        /// m.
        dz: f64,
        /// m.
        height: f64,
        /// `id`.
        id: Option<String>,
    },
    /// `<cornerLocal u v z height>` in the object's local frame.
    Local {
        /// m.
        u: f64,
        /// m.
        v: f64,
        /// m.
        z: f64,
        /// m.
        height: f64,
        /// `id`.
        id: Option<String>,
    },
}

/// An object `<surface><CRG>` (1.7+).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObjectCrg {
    /// CRG file.
    pub file: String,
    /// `hideRoadSurfaceCRG`.
    pub hide_road_surface_crg: Option<bool>,
    /// `zScale`.
    pub z_scale: Option<f64>,
    /// Unknown attributes.
    pub extras: Extras,
}

/// `<signals>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signals {
    /// `<signal>`s.
    pub signals: Vec<Signal>,
    /// Unknown children (`signalReference`, ...).
    pub extras: Extras,
}

/// A `<signal>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signal {
    /// Id.
    pub id: String,
    /// m.
    pub s: f64,
    /// m.
    pub t: f64,
    /// m.
    pub z_offset: f64,
    /// "yes" or "no".
    pub dynamic: String,
    /// "+", "-" or "none".
    pub orientation: String,
    /// `type`.
    pub kind: String,
    /// `subtype`.
    pub subtype: String,
    /// `name`.
    pub name: Option<String>,
    /// `country`.
    pub country: Option<String>,
    /// `value`.
    pub value: Option<f64>,
    /// `unit`.
    pub unit: Option<String>,
    /// m.
    pub height: Option<f64>,
    /// m.
    pub width: Option<f64>,
    /// `text`.
    pub text: Option<String>,
    /// rad.
    pub h_offset: Option<f64>,
    /// Unknown attributes and children (`validity`, `dependency`, `positionInertial`, ...).
    pub extras: Extras,
}
