//! `roadscan convert`: an OpenDRIVE file upgraded to another revision, or an OpenCRG file
//! written in another of its formats.

use super::read_xodr;
use crate::exit;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Runs `convert` (by the input's extension).
pub fn run(input: &Path, output: &Path, version: &str, format: &str, quiet: bool) -> Result<u8> {
    if crate::is_crg(input) {
        crg(input, output, format, quiet)
    } else {
        xodr(input, output, version, quiet)
    }
}

fn crg(input: &Path, output: &Path, format: &str, quiet: bool) -> Result<u8> {
    let Some(format) = opencrg::Format::from_tag(format) else {
        bail!("--format must be KRBI, KDBI, LRFI, LDFI, LRBI or LDBI, got {format}");
    };
    let outputs = roadscan::staging::Outputs::new([input]);
    let staged = outputs.file(roadscan::staging::with_extension("the output", output, &["crg"])?)?;
    let crg = opencrg::read_file(input)?;
    opencrg::write_file(&crg, &staged, format)?;
    outputs.commit()?;
    if !quiet {
        eprintln!("roadscan: wrote {} ({}, {} x {} nodes)", output.display(), format.tag(), crg.nu, crg.nv());
    }
    Ok(exit::OK)
}

fn xodr(input: &Path, output: &Path, version: &str, quiet: bool) -> Result<u8> {
    let Some(version) = opendrive::Version::parse(version) else {
        bail!("--version must be 1.6, 1.7 or 1.8, got {version}");
    };
    let outputs = roadscan::staging::Outputs::new([input]);
    let staged = outputs.file(roadscan::staging::with_extension("the output", output, &["xodr", "xml"])?)?;
    let mut odr = read_xodr(input)?;
    let notes = opendrive::convert::upgrade(&mut odr, version);
    opendrive::write_file(&odr, &staged, &opendrive::WriteOptions { version })
        .with_context(|| format!("writing {}", output.display()))?;
    outputs.commit()?;
    if !quiet {
        const SHOWN: usize = 20;
        for n in notes.iter().take(SHOWN) {
            eprintln!("roadscan: note: {n}");
        }
        if notes.len() > SHOWN {
            eprintln!("roadscan: note: ... and {} more changes", notes.len() - SHOWN);
        }
        eprintln!(
            "roadscan: wrote {} (OpenDRIVE 1.{}, {} roads, {} changes for the target revision)",
            output.display(),
            version.minor(),
            odr.roads.len(),
            notes.len()
        );
    }
    Ok(exit::OK)
}
