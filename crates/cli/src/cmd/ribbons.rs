//! `roadscan ribbons`: the two vertical depth ribbons of a road's sides and the street view.

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use roadscan::roadside::RibbonsConfig;
use std::path::PathBuf;

/// The arguments of `ribbons`.
#[derive(clap::Args, Debug)]
pub struct RibbonsArgs {
    #[command(flatten)]
    pub road: crate::args::RoadArgs,
    /// Output directory (created): left_/right_ depth.png (16-bit, mm, 0 = empty), depth.tif
    /// (float, m, NaN = empty), intensity.png, rgb.png (with colour), street_view.png,
    /// ribbons.json.
    #[arg(long)]
    pub out: PathBuf,
    /// Pixel size, m.
    #[arg(long, default_value_t = 0.1)]
    pub cell: f64,
    /// Heights covered, A..B in m above the road surface: the reference line's elevation, or
    /// the surface found in the points near the reference line where that is missing or off.
    #[arg(long, value_parser = roadscan::config::parse_range, default_value = "-2..20", allow_hyphen_values = true)]
    pub h_range: (f64, f64),
    /// Leave out points nearer than this to the reference line (|t|), m.
    #[arg(long, default_value_t = 0.0)]
    pub min_depth: f64,
}

/// Runs `ribbons`.
pub fn run(a: &RibbonsArgs, progress: &Bars) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let c = RibbonsConfig {
        road: a.road.inputs(),
        out: a.out.clone(),
        cell: a.cell,
        h_range: a.h_range,
        min_depth: a.min_depth,
    };
    let done = roadscan::roadside::ribbons(&c, progress)?;
    if !progress.quiet() {
        eprintln!("roadscan: {}", done.wrote(&c, t0.elapsed().as_secs_f64()));
    }
    Ok(exit::OK)
}
