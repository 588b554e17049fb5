//! `roadscan convert`: an OpenDRIVE file upgraded to another revision, or an OpenCRG file
//! written in another of its formats ([`roadscan::verbs::convert`]).

use crate::exit;
use anyhow::Result;
use std::path::Path;

/// At most this many of the changes made are shown.
const SHOWN: usize = 20;

/// Runs `convert` (by the input's extension).
pub fn run(input: &Path, output: &Path, version: &str, format: &str, quiet: bool) -> Result<u8> {
    let done = roadscan::verbs::convert(input, output, version, format)?;
    if !quiet {
        for n in done.notes.iter().take(SHOWN) {
            eprintln!("roadscan: note: {n}");
        }
        if done.notes.len() > SHOWN {
            eprintln!("roadscan: note: ... and {} more changes", done.notes.len() - SHOWN);
        }
        eprintln!("roadscan: {}", done.wrote);
    }
    Ok(exit::OK)
}
