//! ASAM OpenCRG: model, reader and writer of the standard formats (LRFI, LDFI, KRBI, KDBI,
//! LRBI, LDBI), evaluation that reproduces the reference C-API, checks and rendering.
//!
//! [`read_file`] / [`read_bytes`] parse a file into a [`Crg`] (header blocks, channels and the
//! float32 height grid; work is bounded by the file's size, and an [`Error`] names the file
//! and where in it). [`write()`] / [`write_file`] write a [`Crg`] in any [`Format`] so that the
//! C-API loads it with the same placement and values ([`write_rows`] / [`write_file_rows`]
//! take the heights a row at a time, for grids larger than memory); [`Crg::new_grid`] builds
//! one. [`Surface`] evaluates a grid as the C-API does: [`Surface::uv_to_z`],
//! [`Surface::uv_to_xy`], [`Surface::xy_to_uv`]. [`check::check`] reports what the C-API
//! would warn about or misread and where the grid folds over itself, and [`render::render`]
//! draws a grid as a PNG.
//!
//! Frames: `u` along the reference line, `v` across it (positive to the left), `x, y` the map
//! position of the reference line as the file places it, `z` height; `z[iu * nv + iv]` is the
//! node at the iu-th u and the iv-th v in ascending order. Units are metres and radians.

#![warn(missing_docs)]

pub mod check;
mod error;
pub mod eval;
pub mod model;
mod read;
pub mod render;
mod write;

pub use error::{Error, ErrorKind, Result};
pub use eval::{EvalOptions, Surface};
pub use model::*;
pub use read::{read_bytes, read_file, read_with, ReadOptions, MIN_INCREMENT};
pub use write::{write, write_file, write_file_rows, write_rows};
