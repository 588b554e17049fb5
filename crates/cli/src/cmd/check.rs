//! `roadscan check`: an OpenDRIVE or OpenCRG file checked ([`roadscan::check`]); exit code 1
//! when it has errors.

use crate::exit;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// Runs `check` on `path`.
pub fn run(path: &Path, json: bool) -> Result<u8> {
    let checked = roadscan::check::check(path)?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &checked.json())?;
        writeln!(out)?;
    } else {
        write!(out, "{checked}")?;
    }
    Ok(if checked.counts().0 > 0 { exit::FINDINGS } else { exit::OK })
}
