//! File kinds by extension, and the OpenDRIVE reader the file verbs share.

use anyhow::{bail, Result};
use std::path::Path;

/// Whether `path` names a LAS/LAZ file (`.las`, `.laz`, any case).
pub fn is_las(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("las") || e.eq_ignore_ascii_case("laz"))
}

/// Whether `path` names an OpenCRG file (`.crg`, any case).
pub fn is_crg(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("crg"))
}

/// The OpenDRIVE file `path` (a LAS/LAZ file given by mistake is named as one).
pub fn read_xodr(path: &Path) -> Result<opendrive::OpenDrive> {
    if is_las(path) {
        bail!(
            "{}: a LAS/LAZ file, where an OpenDRIVE (.xodr) or OpenCRG (.crg) file is read; `roadscan info` summarises point clouds",
            path.display()
        );
    }
    Ok(opendrive::read_file(path)?)
}
