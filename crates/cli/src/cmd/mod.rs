//! One module per verb, named after its command: its flags, the call into the `roadscan`
//! library or a format crate, what it prints.

use anyhow::{bail, Result};
use std::path::Path;

pub mod axis;
pub mod build;
pub mod camera;
pub mod check;
pub mod convert;
pub mod crg;
pub mod crg_eval;
pub mod demo;
pub mod eval;
pub mod info;
pub mod lidar;
pub mod render;
pub mod ribbons;
pub mod synth;
pub mod voxel;
pub mod xodr;

/// The OpenDRIVE file `path` (a LAS/LAZ file given by mistake is named as one).
pub fn read_xodr(path: &Path) -> Result<opendrive::OpenDrive> {
    if crate::is_las(path) {
        bail!(
            "{}: a LAS/LAZ file, where an OpenDRIVE (.xodr) or OpenCRG (.crg) file is read; `roadscan info` summarises point clouds",
            path.display()
        );
    }
    Ok(opendrive::read_file(path)?)
}
