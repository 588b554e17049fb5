//! The crate's one error type.

/// Why a scenario cannot be set up or a command cannot be carried out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An actor or prefab id that is already taken.
    #[error("{what} id {id:?} is already in use")]
    DuplicateId {
        /// "actor" or "prefab".
        what: &'static str,
        /// The id.
        id: String,
    },
    /// An id that names nothing.
    #[error("no {what} with id {id:?}")]
    UnknownId {
        /// "actor" or "prefab".
        what: &'static str,
        /// The id.
        id: String,
    },
    /// A number outside the range it must lie in.
    #[error("{what} = {value} is out of range ({range})")]
    Range {
        /// What the number is.
        what: String,
        /// The value.
        value: f64,
        /// The range it must lie in.
        range: &'static str,
    },
    /// A route leg that cannot be read (`lane:ID`).
    #[error("route leg {leg:?}: {why}")]
    Route {
        /// The leg as written.
        leg: String,
        /// What is wrong.
        why: String,
    },
    /// A lane the road does not have where the route needs it.
    #[error("road {road} has no lane {lane} at s = {s} m")]
    NoLane {
        /// The road's id.
        road: String,
        /// The lane.
        lane: i32,
        /// The station, m.
        s: f64,
    },
    /// A point that lies off the road (farther than the surface's reach from its reference line).
    #[error("({x}, {y}) is not on the road (within {reach} m of its reference line)")]
    OffRoad {
        /// m, file frame.
        x: f64,
        /// m, file frame.
        y: f64,
        /// The surface's reach, m.
        reach: f64,
    },
    /// A CRG link that cannot be used.
    #[error("CRG link: {0}")]
    Link(String),
    /// A saved state that cannot be read (JSON error with its line and column).
    #[error("saved state: {0}")]
    State(String),
}
