use super::Extras;

/// A `<junction>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Junction {
    /// Id.
    pub id: String,
    /// Name.
    pub name: Option<String>,
    /// `type`: default, virtual, direct (1.7+).
    pub kind: Option<String>,
    /// `<connection>`s.
    pub connections: Vec<Connection>,
    /// Unknown attributes and children (`priority`, `controller`, `surface`, ...).
    pub extras: Extras,
}

/// A junction `<connection>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Connection {
    /// Id.
    pub id: String,
    /// Incoming road id.
    pub incoming_road: Option<String>,
    /// Connecting road id.
    pub connecting_road: Option<String>,
    /// Linked road id (direct junctions, 1.7+).
    pub linked_road: Option<String>,
    /// "start" or "end".
    pub contact_point: Option<String>,
    /// `<laneLink>`s.
    pub lane_links: Vec<LaneLinkPair>,
    /// Unknown attributes and children.
    pub extras: Extras,
}

/// A `<laneLink from to>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneLinkPair {
    /// Lane id on the incoming road.
    pub from: i32,
    /// Lane id on the connecting road.
    pub to: i32,
    /// Unknown attributes.
    pub extras: Extras,
}
