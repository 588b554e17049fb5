//! `roadscan render`: an OpenCRG file as a PNG ([`roadscan::verbs::render`]).

use crate::exit;
use anyhow::Result;
use std::path::Path;

/// Runs `render`.
pub fn run(path: &Path, out: &Path, relative: &str, range_mm: Option<f64>, quiet: bool) -> Result<u8> {
    let wrote = roadscan::verbs::render(path, out, relative, range_mm)?;
    if !quiet {
        eprintln!("roadscan: {wrote}");
    }
    Ok(exit::OK)
}
