//! ASAM OpenDRIVE 1.4 to 1.8: data model, reader, writer and evaluation.
//!
//! [`read()`] / [`read_file`] parse a document into an [`OpenDrive`] model (unknown elements and
//! attributes kept in [`Extras`]; every error an [`Error`] with file, line and column) and
//! [`write()`] / [`write_file`] print it back as OpenDRIVE 1.6, 1.7 or 1.8 ([`WriteOptions`];
//! the file is written atomically). Neither changes content: [`convert::upgrade`] does, and
//! lists each change. [`RoadEval`] evaluates one road: reference line ([`RoadEval::pose`]),
//! elevation, superelevation, lanes, the road frame ([`RoadEval::sth_to_xyz`]) and its inverse
//! ([`RoadEval::xy_to_st`]). [`validate::check`] reports semantic problems,
//! [`fit::fit_polyline`] and [`fit::fit_profile`] fit lines, arcs, clothoids and cubic profiles
//! to measured points, and [`road_part`] cuts a road to an s range.
//!
//! ```
//! let text = r#"<?xml version="1.0"?>
//! <OpenDRIVE><header revMajor="1" revMinor="8"/>
//!   <road id="1" length="100" junction="-1">
//!     <planView><geometry s="0" x="0" y="0" hdg="0" length="100"><arc curvature="0.01"/></geometry></planView>
//!   </road>
//! </OpenDRIVE>"#;
//! let odr = opendrive::read(text)?;
//! let road = opendrive::RoadEval::new(&odr.roads[0]);
//! let p = road.pose(50.0);
//! assert!((p.hdg - 0.5).abs() < 1e-12);
//! let [x, y, _] = road.sth_to_xyz(50.0, 2.0, 0.0);
//! let st = road.xy_to_st(x, y, 10.0).expect("on the road");
//! assert!((st.s - 50.0).abs() < 1e-6 && (st.t - 2.0).abs() < 1e-6);
//! # Ok::<(), opendrive::Error>(())
//! ```
//!
//! Frames: map `x, y, z` in the file's frame (the header `<offset>` is not applied, add it for
//! georeferenced coordinates); road `s` along the reference line from the road's start, `t`
//! to its left, `h` along the superelevated normal. Units are metres and radians (headings
//! counter-clockwise from +x) throughout.

#![warn(missing_docs)]

pub mod connect;
pub mod convert;
mod error;
pub mod eval;
pub mod fit;
pub mod model;
mod num;
pub mod part;
mod read;
pub mod validate;
mod write;
mod xml;

pub use error::{Error, ErrorKind, Position, Result};
pub use eval::{Pose, RoadEval, StCandidate, SurfaceTable};
pub use model::*;
pub use part::{road_part, PartError};
pub use read::{read, read_file, read_with, ReadOptions, MAX_FILE_BYTES, MAX_STATION};
pub use write::{format_f64, write, write_file, Version, WriteOptions};
pub use xml::MAX_DEPTH;
