//! `roadscan demo`: the embedded demo scene surveyed and built into every product.

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Instant;

/// The arguments of `demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Output directory (replaced as a whole when the demo succeeds).
    #[arg(long, default_value = "roadscan-demo")]
    pub out: PathBuf,
    /// Seed of the scene's textures and of the range noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs `demo`.
pub fn run(a: &DemoArgs, progress: &Bars) -> Result<u8> {
    let t0 = Instant::now();
    let built = roadscan::demo::demo(&a.out, a.seed, progress)?;
    if !progress.quiet() {
        crate::cmd::build::print_where(&a.out, true, t0);
    }
    crate::warn(built.failed())?;
    Ok(exit::OK)
}
