//! The OpenDRIVE data model: plain data, no XML types except [`Element`] for what we keep
//! verbatim. Field names follow the standard; `kind` stands for the attribute `type`.
//!
//! # Units
//! Lengths in metres, angles in radians, curvatures in 1/m, all in the file's own frame
//! (the header `<offset>` is not applied).

mod geometry;
mod junction;
mod lanes;
mod objects;
mod road;

pub use geometry::{Geometry, GeometryKind, PRange};
pub use junction::{Connection, Junction, LaneLinkPair};
pub use lanes::{Lane, LaneHeight, LaneLink, LaneMaterial, LaneSection, LaneSide, LaneSpeed, Lanes, RoadMark};
pub use objects::{Corner, Object, ObjectCrg, Objects, Outline, Repeat, Signal, Signals};
pub use road::{
    ElevationProfile, LateralProfile, LinkTarget, PlanView, Road, RoadCrg, RoadLink, RoadType, Shape, Surface,
};

pub use crate::xml::{Element, Node};

/// Attributes and child elements the model does not interpret, kept to be written back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    /// Unknown attributes, in document order.
    pub attributes: Vec<(String, String)>,
    /// Unknown child elements (`userData`, `include`, vendor data, elements we do not model).
    pub elements: Vec<Element>,
}

impl Extras {
    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.attributes.is_empty() && self.elements.is_empty()
    }
}

/// A cubic polynomial record `a + b·ds + c·ds² + d·ds³` starting at `s`.
///
/// For `<elevation>`, `<superelevation>` and `<laneOffset>` `s` is the road's s. For `<width>`,
/// `<border>` it is the `sOffset` from the start of the lane section.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Poly3 {
    /// Start of the record (s, or sOffset), m.
    pub s: f64,
    /// Constant term.
    pub a: f64,
    /// Linear term.
    pub b: f64,
    /// Quadratic term.
    pub c: f64,
    /// Cubic term.
    pub d: f64,
}

impl Poly3 {
    /// A constant record.
    pub fn constant(s: f64, a: f64) -> Self {
        Poly3 { s, a, b: 0.0, c: 0.0, d: 0.0 }
    }
    /// Value at `ds` from the record start.
    #[inline]
    pub fn value(&self, ds: f64) -> f64 {
        self.a + ds * (self.b + ds * (self.c + ds * self.d))
    }
    /// First derivative at `ds`.
    #[inline]
    pub fn slope(&self, ds: f64) -> f64 {
        self.b + ds * (2.0 * self.c + ds * 3.0 * self.d)
    }
    /// Second derivative at `ds`.
    #[inline]
    pub fn curvature_term(&self, ds: f64) -> f64 {
        2.0 * self.c + 6.0 * self.d * ds
    }
    /// The largest difference of the four coefficients of this record and `next`, each
    /// expanded in powers of s (not of ds from its start), computed as ASAM qc-opendrive's rule
    /// performance.avoid_redundant_info computes it (same operations in the same order).
    pub fn equation_difference(&self, next: &Poly3) -> f64 {
        let (p, q) = (self, next);
        let (s1, s2) = (p.s, q.s);
        let a3 = p.a - q.a - p.b * s1 + q.b * s2 + p.c * s1.powf(2.0) - q.c * s2.powf(2.0) - p.d * s1.powf(3.0)
            + q.d * s2.powf(3.0);
        let b3 = p.b - q.b - 2.0 * p.c * s1 + 2.0 * q.c * s2 + 3.0 * p.d * s1.powf(2.0) - 3.0 * q.d * s2.powf(2.0);
        let c3 = p.c - q.c - 3.0 * p.d * s1 + 3.0 * q.d * s2;
        let d3 = p.d - q.d;
        let m = a3.abs().max(b3.abs()).max(c3.abs()).max(d3.abs());
        // NaN coefficients are no equation at all: never "the same".
        if m.is_nan() {
            f64::INFINITY
        } else {
            m
        }
    }
    /// Whether `next` declares the same cubic as this record (so one of them is redundant),
    /// by qc-opendrive's test: every coefficient difference of [`Poly3::equation_difference`]
    /// below [`REDUNDANT_EPSILON`].
    pub fn same_equation(&self, next: &Poly3) -> bool {
        self.equation_difference(next) < REDUNDANT_EPSILON
    }
}

/// Coefficient difference below which ASAM qc-opendrive (its rule
/// performance.avoid_redundant_info, 1.7 and later) reports two adjacent cubic records as
/// one equation declared twice.
pub const REDUNDANT_EPSILON: f64 = 1e-6;

/// A whole OpenDRIVE file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenDrive {
    /// `<header>`.
    pub header: Header,
    /// `<road>`s in file order.
    pub roads: Vec<Road>,
    /// `<controller>`s, kept verbatim.
    pub controllers: Vec<Element>,
    /// `<junction>`s in file order.
    pub junctions: Vec<Junction>,
    /// Anything else at the top level (`junctionGroup`, `station`, `userData`, ...).
    pub extras: Extras,
}

impl OpenDrive {
    /// The road with this id.
    pub fn road(&self, id: &str) -> Option<&Road> {
        self.roads.iter().find(|r| r.id == id)
    }
}

/// `<header>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// revMajor (1).
    pub rev_major: u32,
    /// revMinor (4 to 8 are read; 8 is written by default).
    pub rev_minor: u32,
    /// Database name.
    pub name: Option<String>,
    /// Database version (a free string).
    pub version: Option<String>,
    /// Creation date (a free string).
    pub date: Option<String>,
    /// Bounds, m.
    pub north: Option<f64>,
    /// Bounds, m.
    pub south: Option<f64>,
    /// Bounds, m.
    pub east: Option<f64>,
    /// Bounds, m.
    pub west: Option<f64>,
    /// Vendor name.
    pub vendor: Option<String>,
    /// The `<geoReference>` text (a PROJ string, or a WKT/EPSG code), verbatim.
    pub geo_reference: Option<String>,
    /// `<offset>` (1.6+): inertial = offset + R(hdg)·file coordinates.
    pub offset: Option<HeaderOffset>,
    /// Unknown attributes and children.
    pub extras: Extras,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            rev_major: 1,
            rev_minor: 8,
            name: None,
            version: None,
            date: None,
            north: None,
            south: None,
            east: None,
            west: None,
            vendor: None,
            geo_reference: None,
            offset: None,
            extras: Extras::default(),
        }
    }
}

/// Header `<offset>`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HeaderOffset {
    /// m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// m.
    pub z: f64,
    /// rad.
    pub hdg: f64,
}

impl HeaderOffset {
    /// The offset prepared for transforming many points between the map and the file frame.
    pub fn placement(&self) -> Placement {
        let (sin, cos) = self.hdg.sin_cos();
        Placement { offset: *self, sin, cos }
    }
}

/// A header `<offset>` with its heading's sine and cosine: map = offset + R(hdg) · file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    offset: HeaderOffset,
    sin: f64,
    cos: f64,
}

impl Placement {
    /// File-frame coordinates of a map point.
    pub fn to_file(&self, map: [f64; 3]) -> [f64; 3] {
        let (dx, dy) = (map[0] - self.offset.x, map[1] - self.offset.y);
        [dx * self.cos + dy * self.sin, -dx * self.sin + dy * self.cos, map[2] - self.offset.z]
    }

    /// Map coordinates of a file-frame point.
    pub fn to_map(&self, file: [f64; 3]) -> [f64; 3] {
        let o = &self.offset;
        [o.x + file[0] * self.cos - file[1] * self.sin, o.y + file[0] * self.sin + file[1] * self.cos, o.z + file[2]]
    }
}

#[cfg(test)]
mod placement_tests {
    use super::*;

    #[test]
    fn map_and_file_frames_round_trip() {
        let place = HeaderOffset { x: 650_000.0, y: 240_000.0, z: 100.0, hdg: 0.7 }.placement();
        let file = [12.5, -3.25, 1.5];
        let map = place.to_map(file);
        // The file's x axis turned by hdg, then shifted.
        assert!((map[0] - (650_000.0 + 12.5 * 0.7f64.cos() + 3.25 * 0.7f64.sin())).abs() < 1e-9);
        assert!((map[2] - 101.5).abs() < 1e-12);
        let back = place.to_file(map);
        assert!(back.iter().zip(file).all(|(a, b)| (a - b).abs() < 1e-9), "{back:?}");
    }
}
