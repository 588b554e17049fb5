//! `roadscan xodr`: the surveyed OpenDRIVE road, an axis road completed from the points
//! (elevation, superelevation, curbs, markings, lanes) and road-surface CRGs (potholes and
//! manholes, the `<surface><CRG>` link).

use crate::progress::Bars;
use anyhow::Result;
use roadscan::xodr::XodrConfig;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `xodr`.
#[derive(clap::Args, Debug)]
pub struct XodrArgs {
    #[command(flatten)]
    pub src: crate::args::AxisInputs,
    /// Road-surface CRGs along the axis (u = s): linked in `<surface>` (mode attached for
    /// residual heights, genuine for absolute) and searched for potholes and manholes.
    #[arg(long, num_args = 1..)]
    pub crg: Vec<PathBuf>,
    /// Output OpenDRIVE file.
    #[arg(long)]
    pub out: PathBuf,
    /// Cross sections cover |t| up to this, m.
    #[arg(long, default_value_t = 10.0)]
    pub half_width: f64,
    /// Elevation records within this of the surface's samples, m (as `build`).
    #[arg(long, default_value_t = 0.002)]
    pub tolerance: f64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `xodr`.
pub fn run(a: &XodrArgs, progress: &Bars) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let c = XodrConfig {
        road: a.src.road_inputs(a.half_width + 0.5, None),
        crg: a.crg.clone(),
        out: a.out.clone(),
        half_width: a.half_width,
        tolerance: a.tolerance,
    };
    let done = roadscan::xodr::survey(&c, progress)?;
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &done.json())?;
        writeln!(out)?;
    } else if !progress.quiet() {
        write!(out, "{done}")?;
    }
    if !progress.quiet() {
        eprintln!("roadscan: {}", done.wrote(&c, t0.elapsed().as_secs_f64()));
    }
    // Even with --quiet: they explain exit code 1 (the road is written).
    crate::warn(done.findings())
}
