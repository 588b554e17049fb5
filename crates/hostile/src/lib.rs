//! Hostile inputs for roadscan (the reliability issue's evidence).
//!
//! - [`gen`]: a deterministic corpus of malformed LAS/LAZ, OpenDRIVE, OpenCRG, CSV, GeoJSON,
//!   OSM and TOML files and bad command lines, each with what every verb must do with it.
//! - [`run`]: runs every relevant `roadscan` verb on every case and checks that none panics,
//!   aborts, hangs or over-allocates, that errors are one line naming the input and a place
//!   with exit code 2, and that a failed run leaves nothing behind and changes no input.
//! - [`fuzz`]: mutation fuzzing of the readers in-process, on the stable toolchain.

pub mod case;
pub mod fuzz;
pub mod gen;
pub mod las;
pub mod mutate;
pub mod rng;
pub mod run;
