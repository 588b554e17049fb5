//! `roadscan crg`: LAS/LAZ points of a road into a 1 cm road-surface CRG.

use anyhow::{bail, Result};
use pipeline::{Estimator, SurfaceBuilder, SurfaceOptions, ZMode};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The arguments of `crg`.
#[derive(clap::Args, Debug)]
pub struct CrgArgs {
    #[command(flatten)]
    pub src: crate::inputs::AxisInputs,
    /// Output CRG (KRBI), written atomically.
    #[arg(long)]
    pub out: PathBuf,
    /// Part of the road, A..B in metres of s (default: the s extent of the surface points).
    #[arg(long, value_parser = crate::parse_range, allow_hyphen_values = true)]
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
pub fn run(a: &CrgArgs, quiet: bool) -> Result<u8> {
    let cell = crate::within("cell", a.cell, 0.001, 1.0)?;
    let max_gap = crate::within("max-gap", a.max_gap, 0.0, 10.0)?;
    let z = match a.z.as_str() {
        "absolute" => ZMode::Absolute,
        "residual" => ZMode::Residual,
        other => bail!("--z must be absolute or residual, got {other}"),
    };
    let estimator = match a.estimator.as_str() {
        "robust" => Estimator::Robust,
        "median" => Estimator::Median,
        other => bail!("--estimator must be robust or median, got {other}"),
    };
    let v_range = match (a.width_right, a.width_left) {
        (Some(r), Some(l)) => {
            Some((-crate::within("width-right", r, 0.01, 100.0)?, crate::within("width-left", l, 0.01, 100.0)?))
        }
        (None, None) => None,
        _ => bail!("give both --width-left and --width-right, or neither (the road's lanes)"),
    };
    let odr = opendrive::read_file(&a.src.axis)?;
    let road = a.src.road(&odr)?;
    if let Some((s0, s1)) = a.s_range {
        if s0 < 0.0 || s1 > road.length + 1e-9 {
            bail!("--s-range {s0}..{s1}: road {} is {} m long", road.id, road.length);
        }
    }
    let mut inputs = a.src.open(&odr, quiet)?;
    inputs.xyz_only();
    if !(a.tile == 0.0 || (a.tile.is_finite() && (1.0..=100_000.0).contains(&a.tile))) {
        bail!("--tile must be 0 (one file) or from 1 to 100000 m, got {}", a.tile);
    }
    if a.tile > 0.0 && a.preview.is_some() {
        bail!("--preview renders one grid: leave it out with --tile (render tiles with roadscan render)");
    }
    // Every file is staged and put in place at the end: an error leaves none of them.
    use crate::outdir::with_extension;
    with_extension("--out", &a.out, &["crg"])?;
    for p in [&a.preview, &a.coverage].into_iter().flatten() {
        with_extension("--preview/--coverage", p, &["png"])?;
    }
    let outputs = crate::outdir::Outputs::new(a.src.files());
    let (crg_out, preview, coverage) = if a.tile > 0.0 {
        (None, None, a.coverage.as_deref().map(|p| outputs.file(p)).transpose()?)
    } else {
        let crg = outputs.file(&a.out)?;
        let preview = a.preview.as_deref().map(|p| outputs.file(p)).transpose()?;
        (Some(crg), preview, a.coverage.as_deref().map(|p| outputs.file(p)).transpose()?)
    };
    let spill_dir = a.out.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf);
    let max_height = crate::within("max-height", a.max_height, 0.01, 100.0)?;
    let opts = SurfaceOptions {
        cell,
        v_range,
        s_range: a.s_range,
        z,
        max_gap,
        max_height,
        estimator,
        spill_dir,
        points_box: inputs.points_box(),
        search_height: match a.search_height {
            None => f64::INFINITY,
            Some(h) => crate::within("search-height", h, 0.0, 10_000.0)?,
        },
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let mut b = SurfaceBuilder::new(road, odr.header.offset, opts)
        .map_err(|e| anyhow::anyhow!("{}: road {}: {e}", a.src.axis.display(), road.id))?;
    let progress = !quiet && std::io::stderr().is_terminal();
    inputs.stream(progress, |p| b.add(&p.x, &p.y, &p.z).map_err(anyhow::Error::msg))?;
    let read_secs = t.elapsed().as_secs_f64();
    if progress {
        let mut last = std::time::Instant::now();
        b.on_progress(move |done, all| {
            if last.elapsed().as_secs_f64() > 0.5 || done == all {
                eprint!(
                    "\rroadscan: gridding {:>5.1} % ({done} of {all} rows)",
                    100.0 * done as f64 / all.max(1) as f64
                );
                if done == all {
                    eprint!("\r{:72}\r", "");
                }
                last = std::time::Instant::now();
            }
        });
    }
    let context = |e: String| anyhow::anyhow!("{}: road {}: {e}", a.src.axis.display(), road.id);
    // The CRG files (and tiles of an earlier, longer run past the last one written now).
    let (g, written, stale) = match (&crg_out, a.tile > 0.0) {
        (Some(crg_out), false) => {
            let g = b.finish().map_err(context)?;
            opencrg::write_file(&g.crg, crg_out, opencrg::Format::Krbi)?;
            if let Some(png) = &preview {
                let title = a.out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let opts = opencrg::render::RenderOptions { title, ..Default::default() };
                opencrg::render::render(&g.crg, png, &opts)?;
            }
            (g, vec![a.out.clone()], Vec::new())
        }
        _ => {
            let stem = a.out.with_extension("");
            let tile = |k: usize| PathBuf::from(format!("{}_{k:03}.crg", stem.display()));
            let (g, staged) = b.write_tiles(a.tile, |k, _n| outputs.file_or_defer(&tile(k))).map_err(context)?;
            let written: Vec<PathBuf> = (0..staged.len()).map(tile).collect();
            let stale: Vec<PathBuf> = (written.len()..).map(tile).take_while(|p| p.is_file()).collect();
            (g, written, stale)
        }
    };
    if let Some(png) = &coverage {
        let (w, h, rgb) = coverage_image(&g.coverage_map);
        opencrg::render::write_rgb_png(png, w, h, &rgb)?;
    }
    for p in &stale {
        outputs.remove(p)?;
    }
    outputs.commit()?;
    if !stale.is_empty() && !quiet {
        eprintln!(
            "roadscan: removed {} tiles of an earlier run past the last one written ({} .. {})",
            stale.len(),
            stale[0].display(),
            stale[stale.len() - 1].display()
        );
    }
    if !quiet {
        let (offered, near, kept) = g.points;
        let what = match written.as_slice() {
            [one] => one.display().to_string(),
            many => format!("{} tiles {} .. {}", many.len(), many[0].display(), many[many.len() - 1].display()),
        };
        eprintln!(
            "roadscan: wrote {what} ({} nodes across at {cell} m, u {:.2}..{:.2}, v {:.2}..{:.2}); coverage {:.1} % ({} nodes estimated, {} filled along track); points: {offered} read, {near} near the surface, {kept} used; {:.1} s (reading {:.1} s)",
            g.crg.nv(),
            g.s_range.0,
            g.s_range.1,
            g.crg.road.v_right.unwrap_or(0.0),
            g.crg.road.v_left.unwrap_or(0.0),
            100.0 * g.coverage,
            g.estimated,
            g.filled,
            t.elapsed().as_secs_f64(),
            read_secs
        );
    }
    Ok(crate::exit::OK)
}

/// The coverage map as an RGB image: width along s, the left edge (largest v) on top.
fn coverage_image(m: &pipeline::CoverageMap) -> (usize, usize, Vec<u8>) {
    let (w, h) = (m.width, m.height);
    let mut rgb = vec![0u8; w * h * 3];
    for i in 0..w {
        for j in 0..h {
            let share = m.share[i * h + j];
            let px = if share == 0 { [170, 20, 20] } else { [(60 + (share as u32 * 195) / 255) as u8; 3] };
            let at = ((h - 1 - j) * w + i) * 3;
            rgb[at..at + 3].copy_from_slice(&px);
        }
    }
    (w, h, rgb)
}
