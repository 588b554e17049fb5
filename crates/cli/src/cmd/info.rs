//! `roadscan info`: the summary of LAS/LAZ and OpenCRG files ([`roadscan::info`]) printed.

use crate::exit;
use anyhow::Result;
use std::io::Write;

/// Runs `info` on each file, in order; an error ends the run.
pub fn run(files: &[std::path::PathBuf], json: bool) -> Result<u8> {
    for f in files {
        let info = roadscan::info::info(f)?;
        let mut out = std::io::stdout().lock();
        if json {
            serde_json::to_writer(&mut out, &info.json())?;
            writeln!(out)?;
        } else {
            write!(out, "{info}")?;
        }
    }
    Ok(exit::OK)
}
