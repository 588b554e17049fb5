//! `roadscan crg`: LAS/LAZ points of a road into a 1 cm road-surface CRG.

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use roadscan::crg::CrgConfig;
use std::path::PathBuf;

/// The arguments of `crg`.
#[derive(clap::Args, Debug)]
pub struct CrgArgs {
    #[command(flatten)]
    pub src: crate::args::AxisInputs,
    /// Output CRG (KRBI), written atomically.
    #[arg(long)]
    pub out: PathBuf,
    /// Part of the road, A..B in metres of s (default: the s extent of the surface points).
    #[arg(long, value_parser = roadscan::config::parse_range, allow_hyphen_values = true)]
    pub s_range: Option<(f64, f64)>,
    /// Grid width left of the reference line, m (default: the road's outermost lane border).
    #[arg(long)]
    pub width_left: Option<f64>,
    /// Grid width right of the reference line, m (positive; default: the outermost lane border).
    #[arg(long)]
    pub width_right: Option<f64>,
    /// Cell size, m.
    #[arg(long, default_value_t = 0.01)]
    pub cell: f64,
    /// Heights: absolute (file frame of the axis; the grid holds them above a datum, the
    /// road's elevation at the start to the metre, in REFERENCE_LINE_START_Z) or residual (above
    /// the OpenDRIVE surface).
    #[arg(long, default_value = "absolute")]
    pub z: String,
    /// Longest along-track gap filled by interpolation, m.
    #[arg(long, default_value_t = 0.1)]
    pub max_gap: f64,
    /// Points farther than this above or below the road surface (the axis' OpenDRIVE surface,
    /// or the one found in the points where the axis' elevation is off) are not road surface
    /// (cars, kerbs, vegetation), m.
    #[arg(long, default_value_t = 0.3)]
    pub max_height: f64,
    /// Where the axis' elevation is missing or off (an OSM way, a 2-D polyline), the road
    /// surface is found in the points within this height of the axis' surface, m (default: any
    /// height; 0: take the axis' elevation as it is).
    #[arg(long)]
    pub search_height: Option<f64>,
    /// Estimator: robust (locally weighted plane fits; the median of the six nearest points where
    /// the surface is not smooth) or median (per-cell median).
    #[arg(long, default_value = "robust")]
    pub estimator: String,
    /// Also render the grid as a PNG (colour + hillshade; not with tiles).
    #[arg(long)]
    pub preview: Option<PathBuf>,
    /// Also write a coverage map as a PNG: a pixel per 10 x 10 nodes, along s to the right,
    /// the left edge on top; grey from dark (few nodes with a height) to white (all), red
    /// where none has one.
    #[arg(long)]
    pub coverage: Option<PathBuf>,
    /// Write tiles of this many metres along s (OUT_000.crg, OUT_001.crg, ...; neighbours
    /// share their boundary row) with memory bounded by a few metres of points; 0 = one file.
    #[arg(long, default_value_t = 0.0)]
    pub tile: f64,
}

/// Runs `crg`.
pub fn run(a: &CrgArgs, progress: &Bars) -> Result<u8> {
    let c = CrgConfig {
        road: a.src.road_inputs(0.0, a.s_range),
        out: a.out.clone(),
        width_left: a.width_left,
        width_right: a.width_right,
        cell: a.cell,
        z: a.z.clone(),
        max_gap: a.max_gap,
        max_height: a.max_height,
        search_height: a.search_height,
        estimator: a.estimator.clone(),
        preview: a.preview.clone(),
        coverage: a.coverage.clone(),
        tile: a.tile,
    };
    let t = std::time::Instant::now();
    let done = roadscan::crg::grid(&c, progress)?;
    if !progress.quiet() {
        if let Some(removed) = done.removed() {
            eprintln!("roadscan: {removed}");
        }
        eprintln!("roadscan: {}", done.wrote(&c, t.elapsed().as_secs_f64()));
    }
    Ok(exit::OK)
}
