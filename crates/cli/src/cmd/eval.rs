//! `roadscan eval`: an OpenDRIVE file sampled along s ([`roadscan::eval::Samples`]) printed.

use crate::exit;
use anyhow::Result;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Runs `eval`.
pub fn run(path: &Path, step: f64, roads: &[String]) -> Result<u8> {
    let samples = roadscan::eval::Samples::new(path, step, roads)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    write!(out, "{samples}")?;
    out.flush()?;
    Ok(exit::OK)
}
