//! ASAM OpenCRG: model, reader and writer of the standard formats (LRFI, LDFI, KRBI, KDBI,
//! LRBI, LDBI), evaluation that reproduces the reference C-API, checks and rendering.

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
