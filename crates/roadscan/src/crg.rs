//! A road-surface CRG from LAS/LAZ points (`roadscan crg`): one grid or tiles along s, with
//! a preview and a coverage map.

use crate::progress::{Progress, Stage};
use crate::roadside::RoadInputs;
use anyhow::{bail, Result};
use pipeline::{Estimator, SurfaceBuilder, SurfaceOptions, SurfaceScope, SurfaceStorage, ZMode};
use std::path::{Path, PathBuf};

/// What `crg` makes.
#[derive(Debug, Clone)]
pub struct CrgConfig {
    /// The axis road and its points (`s_range`: the part gridded; `buffer` is not used).
    pub road: RoadInputs,
    /// The CRG file (KRBI); with `tile`, the stem of the tiles.
    pub out: PathBuf,
    /// Grid width left and right of the reference line, m (default: the outermost lane
    /// borders).
    pub width_left: Option<f64>,
    /// See `width_left` (positive).
    pub width_right: Option<f64>,
    /// Cell size, m.
    pub cell: f64,
    /// Heights: "absolute" or "residual" (above the OpenDRIVE surface).
    pub z: String,
    /// Longest along-track gap filled by interpolation, m.
    pub max_gap: f64,
    /// Points farther than this above or below the road surface are not road surface, m.
    pub max_height: f64,
    /// Where the axis' elevation is off, the surface is searched within this height, m
    /// (None: any height).
    pub search_height: Option<f64>,
    /// "robust" or "median".
    pub estimator: String,
    /// A PNG render of the grid (not with tiles).
    pub preview: Option<PathBuf>,
    /// A PNG coverage map.
    pub coverage: Option<PathBuf>,
    /// Tiles of this many metres along s; 0: one file.
    pub tile: f64,
}

/// What `crg` wrote.
#[derive(Debug)]
pub struct CrgDone {
    /// The grid (the last tile's CRG with tiles) and its counts.
    pub grid: pipeline::SurfaceGrid,
    /// The CRG files written.
    pub written: Vec<PathBuf>,
    /// Tiles of an earlier, longer run past the last one written, removed.
    pub stale: Vec<PathBuf>,
    /// Seconds reading the points.
    pub read_secs: f64,
}

/// Grids the road surface `a` asks for; every file is staged and put in place at the end
/// (an error leaves none of them).
pub fn grid(a: &CrgConfig, progress: &dyn Progress) -> Result<CrgDone> {
    let cell = crate::config::within("cell", a.cell, 0.001, 1.0)?;
    let max_gap = crate::config::within("max-gap", a.max_gap, 0.0, 10.0)?;
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
        (Some(r), Some(l)) => Some((
            -crate::config::within("width-right", r, 0.01, 100.0)?,
            crate::config::within("width-left", l, 0.01, 100.0)?,
        )),
        (None, None) => None,
        _ => bail!("give both --width-left and --width-right, or neither (the road's lanes)"),
    };
    let odr = opendrive::read_file(&a.road.axis)?;
    let road = a.road.road(&odr)?;
    if let Some((s0, s1)) = a.road.s_range {
        if s0 < 0.0 || s1 > road.length + 1e-9 {
            bail!("--s-range {s0}..{s1}: road {} is {} m long", road.id, road.length);
        }
    }
    let mut inputs = a.road.open(&odr, progress)?;
    inputs.xyz_only();
    if !(a.tile == 0.0 || (a.tile.is_finite() && (1.0..=100_000.0).contains(&a.tile))) {
        bail!("--tile must be 0 (one file) or from 1 to 100000 m, got {}", a.tile);
    }
    if a.tile > 0.0 && a.preview.is_some() {
        bail!("--preview renders one grid: leave it out with --tile (render tiles with roadscan render)");
    }
    // Every file is staged and put in place at the end: an error leaves none of them.
    use crate::staging::with_extension;
    with_extension("--out", &a.out, &["crg"])?;
    for p in [&a.preview, &a.coverage].into_iter().flatten() {
        with_extension("--preview/--coverage", p, &["png"])?;
    }
    let outputs = crate::staging::Outputs::new(a.road.files());
    let (crg_out, preview, coverage) = if a.tile > 0.0 {
        (None, None, a.coverage.as_deref().map(|p| outputs.file(p)).transpose()?)
    } else {
        let crg = outputs.file(&a.out)?;
        let preview = a.preview.as_deref().map(|p| outputs.file(p)).transpose()?;
        (Some(crg), preview, a.coverage.as_deref().map(|p| outputs.file(p)).transpose()?)
    };
    let spill_dir = a.out.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf);
    let max_height = crate::config::within("max-height", a.max_height, 0.01, 100.0)?;
    let opts = SurfaceOptions {
        cell,
        v_range,
        s_range: a.road.s_range,
        z,
        max_gap,
        max_height,
        estimator,
        search_height: match a.search_height {
            None => f64::INFINITY,
            Some(h) => crate::config::within("search-height", h, 0.0, 10_000.0)?,
        },
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let (storage, scope) = (
        SurfaceStorage { spill_dir, ..Default::default() },
        SurfaceScope { points_box: inputs.points_box(), unit: None },
    );
    let mut b = SurfaceBuilder::with(road, odr.header.offset, opts, &storage, scope)
        .map_err(|e| anyhow::anyhow!("{}: road {}: {e}", a.road.axis.display(), road.id))?;
    inputs.stream(|p| b.add(&p.x, &p.y, &p.z).map_err(anyhow::Error::msg))?;
    let read_secs = t.elapsed().as_secs_f64();
    // Gridding: an unnumbered stage in per cent of the rows.
    let stage = Stage { index: 0, of: 0, what: "gridding", len: Some(100) };
    progress.stage(&stage);
    b.on_progress(move |done, all| progress.advance((100 * done / all.max(1)) as u64));
    let context = |e: pipeline::Error| anyhow::anyhow!("{}: road {}: {e}", a.road.axis.display(), road.id);
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
    progress.stage_end(&stage, Some(t.elapsed().as_secs_f64() - read_secs));
    if let Some(png) = &coverage {
        let (w, h, rgb) = coverage_image(&g.coverage_map);
        opencrg::render::write_rgb_png(png, w, h, &rgb)?;
    }
    for p in &stale {
        outputs.remove(p)?;
    }
    outputs.commit()?;
    Ok(CrgDone { grid: g, written, stale, read_secs })
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
