//! `roadscan convert`: an OpenDRIVE file upgraded to another revision, or an OpenCRG file
//! written in another of its formats ([`roadscan::verbs::convert`]); `roadscan connect`: a map's
//! junctions with generated connecting roads ([`roadscan::verbs::connect`]).

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

/// Runs `connect`: one line per junction (before and after), then what was written.
pub fn connect(input: &Path, output: &Path, junctions: &[String], quiet: bool) -> Result<u8> {
    let done = roadscan::verbs::connect(input, output, junctions)?;
    if !quiet {
        for (id, before, after, k) in &done.junctions {
            eprintln!(
                "roadscan: junction {id}: {before} connecting roads replaced by {after} (sharpest 1/{:.1} m)",
                1.0 / k.max(1e-9)
            );
        }
        eprintln!("roadscan: {}", done.wrote);
    }
    Ok(exit::OK)
}
