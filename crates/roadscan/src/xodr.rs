//! The surveyed OpenDRIVE road (`roadscan xodr`): an axis road completed from the points
//! (elevation, superelevation, curbs, markings, lanes) and road-surface CRGs (potholes and
//! manholes, the `<surface><CRG>` link).

use crate::progress::{Note, Progress};
use crate::roadside::RoadInputs;
use anyhow::{bail, Context, Result};
use pipeline::road::{survey_road, CrgInput, SurveyOptions, SurveyReport};
use pipeline::section::SectionOptions;
use pipeline::RoadsideOptions;
use std::io::Write;
use std::path::PathBuf;

/// What `xodr` makes: the surveyed road of an axis road and its points.
#[derive(Debug, Clone)]
pub struct XodrConfig {
    /// The axis road and its points (`buffer` and `s_range` are not used).
    pub road: RoadInputs,
    /// Road-surface CRGs along the axis (u = s) to link and search.
    pub crg: Vec<PathBuf>,
    /// The OpenDRIVE file to write.
    pub out: PathBuf,
    /// Cross sections cover |t| up to this, m.
    pub half_width: f64,
    /// Elevation records within this of the surface's samples, m.
    pub tolerance: f64,
}

/// What `xodr` wrote.
#[derive(Debug)]
pub struct XodrDone {
    /// The road as written.
    pub odr: opendrive::OpenDrive,
    /// What was measured, and what the survey could not find (`findings`).
    pub report: SurveyReport,
    /// Points read, and near the road.
    pub points: pipeline::RoadsidePoints,
}

/// Surveys the road `a` asks for and writes it (staged, put in place at the end).
pub fn survey(a: &XodrConfig, progress: &dyn Progress) -> Result<XodrDone> {
    let half = crate::config::within("half-width", a.half_width, 0.5, 100.0)?;
    crate::config::within("tolerance", a.tolerance, 1e-4, 10.0)?;
    let outputs = crate::staging::Outputs::new(a.road.files().into_iter().chain(a.crg.iter().cloned()));
    let staged = outputs.file(crate::staging::with_extension("--out", &a.out, &["xodr", "xml"])?)?;
    // CRGs first: a bad one fails before the points are read.
    let mut crgs = Vec::new();
    for p in &a.crg {
        let crg = opencrg::read_file(p)?;
        let file = match (a.out.parent(), p.canonicalize()) {
            (Some(dir), Ok(abs)) => relative(dir, &abs).unwrap_or_else(|| abs.display().to_string()),
            _ => p.display().to_string(),
        };
        crgs.push((file, crg));
    }
    let args = RoadInputs { buffer: half + 0.5, s_range: None, ..a.road.clone() };
    let opts = RoadsideOptions {
        buffer: half + 0.5,
        voxel_size: None,
        sections: Some(SectionOptions { half_width: half, ..Default::default() }),
        ..Default::default()
    };
    let (side, _) = crate::roadside::build(&args, opts, progress)?;
    let grid = side.sections.as_ref().context("no cross sections were built")?;
    if side.points.kept == 0 {
        bail!("no points within {half} m of the road (check the axis, the road id and the CRS)");
    }
    let axis = opendrive::read_file(&a.road.axis)?;
    let road = a.road.road(&axis)?;
    let inputs: Vec<CrgInput<'_>> = crgs.iter().map(|(f, c)| CrgInput { file: f.clone(), crg: c }).collect();
    let sopts = SurveyOptions { elevation_tolerance: a.tolerance, ..Default::default() };
    let (mut odr, mut report) = survey_road(&axis, road, grid, &inputs, &sopts).map_err(anyhow::Error::msg)?;
    // The surveyed part of the road, as `build` writes it; with --crg the whole road (the
    // links' CRGs are in the axis road's s).
    let part = if a.crg.is_empty() { crate::build::part_of(road, report.s_range, None, 0.01) } else { None };
    if let Some(p) = part {
        crate::build::cut_survey(&mut odr, &mut report, p)
            .map_err(|e| anyhow::anyhow!("{}: road {}: {e}", a.road.axis.display(), road.id))?;
        progress.note(&Note::Info(format!(
            "the points cover s {:.1}..{:.1} of road {}: {} holds that part (its s 0 is the axis road's s {:.2})",
            p.0,
            p.1,
            road.id,
            a.out.display(),
            p.0
        )));
    }
    write_checked(&odr, &staged)?;
    outputs.commit()?;
    Ok(XodrDone { odr, report, points: side.points })
}

/// Writes the surveyed road `odr` to `path` after checking that it reads back as built.
pub fn write_checked(odr: &opendrive::OpenDrive, path: &std::path::Path) -> Result<()> {
    let text = opendrive::write(odr, &Default::default())?;
    let back = opendrive::read(&text).context("internal: the surveyed road does not read back")?;
    if back.roads[0].lanes != odr.roads[0].lanes
        || back.roads[0].objects.objects.len() != odr.roads[0].objects.objects.len()
    {
        bail!("internal: the surveyed road's lanes or objects do not read back as written");
    }
    // The text checked is the text written.
    voxel::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
    Ok(())
}

/// `path` relative to the directory `dir` (both made absolute), for the `<CRG file>`.
pub fn relative(dir: &std::path::Path, path: &std::path::Path) -> Option<String> {
    let dir = if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir };
    let dir = dir.canonicalize().ok()?;
    let common = dir.components().zip(path.components()).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in dir.components().skip(common) {
        rel.push("..");
    }
    for c in path.components().skip(common) {
        rel.push(c);
    }
    Some(rel.display().to_string())
}
