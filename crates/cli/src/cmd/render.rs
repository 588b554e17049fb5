//! `roadscan render`: an OpenCRG file as a PNG (colour and hillshade, legend and caption).

use crate::exit;
use anyhow::{bail, Result};
use std::path::Path;

/// Runs `render`.
pub fn run(path: &Path, out: &Path, relative: &str, range_mm: Option<f64>, quiet: bool) -> Result<u8> {
    use opencrg::render::{Relative, RenderOptions};
    let relative = match relative {
        "plane" => Relative::FittedPlane,
        "refline" => Relative::ReferenceLine,
        other => bail!("--relative must be plane or refline, got {other}"),
    };
    if let Some(r) = range_mm {
        if !(r.is_finite() && r > 0.0) {
            bail!("--range-mm must be a positive number, got {r}");
        }
    }
    let outputs = roadscan::staging::Outputs::new([path]);
    let staged = outputs.file(roadscan::staging::with_extension("--out", out, &["png"])?)?;
    let crg = opencrg::read_file(path)?;
    let title = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let opts = RenderOptions { relative, range: range_mm.map(|r| r / 1000.0), title, ..Default::default() };
    let info = opencrg::render::render(&crg, &staged, &opts)?;
    outputs.commit()?;
    if !quiet {
        eprintln!(
            "roadscan: wrote {} ({} x {} px, colour range +-{:.1} mm{})",
            out.display(),
            info.width,
            info.height,
            info.range * 1000.0,
            if info.downsample > 1 { format!(", downsampled 1:{}", info.downsample) } else { String::new() }
        );
    }
    Ok(exit::OK)
}
