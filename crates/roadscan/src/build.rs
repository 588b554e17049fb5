//! A build: LAS/LAZ points and an axis in, every product out, the points read once.
//!
//! Every chunk of points goes to two builders: the roadside builder (voxels, ribbons and the
//! cross sections) and the surface builder (the CRG's candidates near the axis road's
//! surface). After the read, the surveyed road (elevation, superelevation, curbs, markings,
//! lanes) comes from the cross sections, the CRG tiles are gridded as heights above its
//! surface, and the road is completed with the tiles' potholes and manholes and the
//! `<surface><CRG>` links. Everything is written into a directory (a staging directory that
//! replaces the output at the end, see [`build()`]), with a report and a manifest.

use crate::config::{AxisSource, BuildConfig};
use crate::manifest::{hash_file, peak_rss_mb, shown, write_manifest};
use crate::progress::{Note, Progress, Stages};
use crate::report;
use crate::roadside::{write_ribbons, write_voxels, InputInfo, VoxelOut};
use crate::staging::Outputs;
use anyhow::{bail, Context, Result};
use pipeline::registration::Registration;
use pipeline::road::{survey_road, SurveyOptions};
use pipeline::section::SectionOptions;
use pipeline::{
    PointColumns, RibbonOptions, Roadside, RoadsideBuilder, RoadsideOptions, SurfaceBuilder, SurfaceOptions, ZMode,
};
use pipeline::{SurfaceScope, SurfaceStorage};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Builds every product of `config` into its output directory: staged, and put in place
/// whole when the build succeeds (the previous products survive a failure). Failed checks do
/// not fail the build: they are in [`Built::failed`] and the report.
pub fn build(config: &BuildConfig, progress: &dyn Progress) -> Result<Built> {
    let outputs = Outputs::new(config.inputs());
    let dir = outputs.dir(&config.out, "manifest.json")?;
    let built = build_into(config, &dir, progress)?;
    outputs.commit()?;
    Ok(built)
}

/// What a build made.
#[derive(Debug)]
pub struct Built {
    /// The report (its checks among it).
    pub report: report::Report,
    /// report.json as written ([`report::Report::json`]).
    pub report_json: Vec<u8>,
}

impl Built {
    /// The checks that failed (the products are written all the same).
    pub fn failed(&self) -> impl Iterator<Item = &report::Check> {
        self.report.failed()
    }
}

/// The axis of a build.
pub(crate) struct AxisOf {
    /// Its OpenDRIVE (when fitted: as read back from its text, like units read it).
    pub odr: opendrive::OpenDrive,
    /// The file read, or the trajectory fitted (for messages).
    pub path: PathBuf,
    /// As the report names it.
    pub label: String,
    /// The fitted axis and its tolerance, and its OpenDRIVE text (for OUT/axis.xodr).
    pub fit: Option<(pipeline::axis::AxisRoad, f64, String)>,
    /// A network made from OSM ways: its OpenDRIVE text (for OUT/axis.xodr).
    pub made: Option<String>,
}

impl AxisOf {
    /// The axis `s` names: read, or fitted to the trajectory (not written).
    pub fn of(s: &BuildConfig) -> Result<AxisOf> {
        AxisOf::of_noted(s, &crate::Silent)
    }

    /// [`AxisOf::of`], noting what a drive path found in the points estimated.
    pub fn of_noted(s: &BuildConfig, progress: &dyn Progress) -> Result<AxisOf> {
        match &s.axis {
            AxisSource::File { path, .. } => Ok(AxisOf {
                odr: opendrive::read_file(path)?,
                path: path.clone(),
                label: path.display().to_string(),
                fit: None,
                made: None,
            }),
            AxisSource::Osm { path, trajectory, offset } => {
                let args = crate::axis::AxisConfig {
                    osm: Some(path.clone()),
                    trajectory: trajectory.clone(),
                    offset: offset.unwrap_or(0.0),
                    crs: s.crs.clone(),
                    ..Default::default()
                };
                let (_, _, text) = crate::axis::osm_network(&args)?;
                let odr =
                    opendrive::read(&text).with_context(|| format!("{}: the network of its ways", path.display()))?;
                Ok(AxisOf { odr, path: path.clone(), label: "axis.xodr".into(), fit: None, made: Some(text) })
            }
            AxisSource::Passes { path, offset } => {
                let Some((_, _, text)) = crate::axis::passes_network(path, *offset, s.crs.clone())? else {
                    bail!("{}: its passes meet at no junction: no network to build", path.display())
                };
                let odr =
                    opendrive::read(&text).with_context(|| format!("{}: the network of its passes", path.display()))?;
                Ok(AxisOf { odr, path: path.clone(), label: "axis.xodr".into(), fit: None, made: Some(text) })
            }
            AxisSource::Trajectory { path, offset, sensor_height, pass } => {
                let sensor_height = match sensor_height {
                    Some(h) => *h,
                    None => {
                        let (_, note) = crate::axis::drive_path(&s.input, s.crs.as_deref()).with_context(|| {
                            format!("--trajectory {}: no --sensor-height, and the points do not give it either; give --sensor-height (the scanner's height above the road, m)", path.display())
                        })?;
                        progress.note(&Note::Info(format!(
                            "no --sensor-height: the scanner is {:.3} m above the road (the median under its track in the points){}",
                            note.sensor_height,
                            if *offset == 0.0 { "; no --offset: the reference line is the vehicle's track (the lanes found place the road's centre)" } else { "" }
                        )));
                        note.sensor_height
                    }
                };
                let args = crate::axis::AxisConfig {
                    trajectory: Some(path.clone()),
                    offset: *offset,
                    sensor_height,
                    pass: pass.clone(),
                    crs: s.crs.clone(),
                    ..Default::default()
                };
                let (built, text, _) = crate::axis::fit(&args)?;
                let odr = opendrive::read(&text).with_context(|| format!("{}: the fitted axis", path.display()))?;
                Ok(AxisOf {
                    odr,
                    path: path.clone(),
                    label: "axis.xodr".into(),
                    fit: Some((built, args.tolerance, text)),
                    made: None,
                })
            }
            AxisSource::DrivePath => {
                let path = s.input.first().cloned().unwrap_or_default();
                let args =
                    crate::axis::AxisConfig { points: s.input.clone(), crs: s.crs.clone(), ..Default::default() };
                let (built, text, _, _) = crate::axis::fit_noted(&args, progress)?;
                let odr =
                    opendrive::read(&text).with_context(|| format!("{}: the drive path's axis", path.display()))?;
                Ok(AxisOf {
                    odr,
                    path,
                    label: "axis.xodr".into(),
                    fit: Some((built, args.tolerance, text)),
                    made: None,
                })
            }
        }
    }

    /// The road of the axis that `s` names, checked against `--s-range`.
    pub fn road(&self, s: &BuildConfig) -> Result<&opendrive::Road> {
        let road = match &s.axis {
            AxisSource::File { road: Some(id), .. } => {
                self.odr.road(id).with_context(|| format!("{}: no road with id '{id}'", self.path.display()))?
            }
            _ => self.odr.roads.first().with_context(|| format!("{}: no roads", self.path.display()))?,
        };
        if let Some((a, b)) = s.s_range {
            if a < 0.0 || b > road.length + 1e-9 {
                bail!("--s-range {a}..{b}: road {} is {} m long", road.id, road.length);
            }
        }
        Ok(road)
    }

    /// The inputs of `s`, opened against this axis (a bad file fails before any work).
    pub fn inputs<'p>(&self, s: &BuildConfig, progress: &'p dyn Progress) -> Result<crate::inputs::Inputs<'p>> {
        crate::inputs::Inputs::open(&self.odr, &self.path, s.crs.as_deref(), &s.input, progress)
    }

    /// Writes the fitted axis (if any) as `dir/axis.xodr`.
    pub fn write_into(&self, dir: &Path) -> Result<()> {
        if let Some(text) = self.fit.as_ref().map(|f| &f.2).or(self.made.as_ref()) {
            voxel::write_atomic(&dir.join("axis.xodr"), |w| w.write_all(text.as_bytes()))?;
        }
        Ok(())
    }
}

/// An error about road `road` of the axis source the user gave (not a staged copy).
pub(crate) fn on_road<E: std::fmt::Display>(s: &BuildConfig, road: &opendrive::Road) -> impl Fn(E) -> anyhow::Error {
    let source = match &s.axis {
        AxisSource::File { path, .. } | AxisSource::Trajectory { path, .. } => path.display().to_string(),
        AxisSource::DrivePath => "axis.xodr (the drive path of the inputs)".to_string(),
        AxisSource::Osm { path, trajectory: None, .. } => format!("axis.xodr (the network of {})", path.display()),
        AxisSource::Osm { path, trajectory: Some(t), .. } => {
            format!("axis.xodr (the network of {}, its lines moved onto the passes of {})", path.display(), t.display())
        }
        AxisSource::Passes { path, .. } => format!("axis.xodr (the network the passes of {} drive)", path.display()),
    };
    let id = road.id.clone();
    move |e: E| anyhow::anyhow!("{source}: road {id}: {e}")
}

/// The roadside builder's options of a build (`part`: a unit's share of the points).
pub(crate) fn roadside_options(s: &BuildConfig, part: Option<(f64, f64)>) -> RoadsideOptions {
    RoadsideOptions {
        buffer: s.buffer,
        s_range: s.s_range,
        voxel_size: Some(s.voxel_size),
        origin: None,
        ribbons: Some(RibbonOptions { cell: s.ribbon_cell, ..Default::default() }),
        sections: Some(SectionOptions { half_width: s.half_width, ..Default::default() }),
        part,
        points_box: None,
        clip_to_points: false,
    }
}

/// The surface builder's options of a build (`s_range`: the grid's).
pub(crate) fn surface_options(s: &BuildConfig, s_range: Option<(f64, f64)>) -> SurfaceOptions {
    SurfaceOptions {
        cell: s.cell,
        v_range: Some((-s.half_width, s.half_width)),
        s_range,
        z: ZMode::Residual,
        ..Default::default()
    }
}

/// A build's surface builder spills into `dir` (a killed build leaves its spill where the next
/// run clears it).
pub(crate) fn surface_storage(dir: &Path) -> SurfaceStorage {
    SurfaceStorage { spill_dir: Some(dir.to_path_buf()), ..Default::default() }
}

/// Stage: the points, once, into the builders; returns the seconds it took and the points
/// read from each input.
pub(crate) fn read_points(
    st: &mut Stages,
    inputs: crate::inputs::Inputs,
    mut side: Option<&mut RoadsideBuilder>,
    surface: &mut SurfaceBuilder,
    what: &str,
) -> Result<(f64, Vec<(usize, u64)>)> {
    let t = Instant::now();
    let total = inputs.total();
    let counts = st.run(what, Some(total), |bar| {
        inputs.stream_reporting(|done, _| bar.advance(done), |p| feed(side.as_deref_mut(), surface, p))
    })?;
    Ok((t.elapsed().as_secs_f64(), counts))
}

/// A chunk of points into the roadside builder (if any) and the surface builder.
fn feed(side: Option<&mut RoadsideBuilder>, surface: &mut SurfaceBuilder, p: &scan::Points) -> Result<()> {
    if let Some(side) = side {
        let rgb = (!p.rgb.is_empty()).then_some(p.rgb.as_slice());
        let cols = PointColumns { x: &p.x, y: &p.y, z: &p.z, intensity: &p.intensity, class: &p.class, rgb };
        side.add(cols).map_err(anyhow::Error::from)?;
    }
    surface.add(&p.x, &p.y, &p.z).map_err(anyhow::Error::msg)
}

/// The surveyed road (read back), its OpenDRIVE text, what was measured, and the part of the
/// axis road it is (None: all of it).
pub(crate) type Surveyed = (opendrive::OpenDrive, String, pipeline::road::SurveyReport, Option<(f64, f64)>);

/// The products cover the surveyed s range and this much more at either end (within the road), m.
pub(crate) const PART_MARGIN: f64 = 2.0;

/// The part of the axis road the products cover: the surveyed s range `surveyed` (within
/// `seen`, the s extent of the road-surface points, when there are any: the cross sections'
/// rows are coarser than the points; rounded inward to whole cells of `cell`), widened by
/// [`PART_MARGIN`] and clamped to the road, its start rounded down to whole cells of `cell`
/// (so that the CRG's u keeps the grid's lattice); None when that is the whole road.
pub(crate) fn part_of(
    road: &opendrive::Road,
    surveyed: Option<(f64, f64)>,
    seen: Option<(f64, f64)>,
    cell: f64,
) -> Option<(f64, f64)> {
    let (lo, hi) = surveyed?;
    let (lo, hi) = match seen {
        Some((a, b)) if a.max(lo) < b.min(hi) => (a.max(lo), b.min(hi)),
        _ => (lo, hi),
    };
    // Inward to whole cells: points a few millimetres beyond a whole cell do not widen the part.
    let (lo, hi) = match ((lo / cell - 1e-6).ceil() * cell, (hi / cell + 1e-6).floor() * cell) {
        (l, h) if l < h => (l, h),
        _ => (lo, hi),
    };
    let a = (lo - PART_MARGIN).max(0.0);
    let a = (a / cell + 1e-9).floor() * cell;
    let b = (hi + PART_MARGIN).min(road.length);
    (a > 0.0 || b < road.length).then_some((a, b)).filter(|&(a, b)| a < b)
}

/// Cuts the surveyed road (the first of `plain`) to `a..b` of its s (`road_part`) and puts
/// what was measured in the part's s.
pub(crate) fn cut_survey(
    plain: &mut opendrive::OpenDrive,
    survey: &mut pipeline::road::SurveyReport,
    (a, b): (f64, f64),
) -> std::result::Result<(), String> {
    plain.roads[0] = opendrive::road_part(&plain.roads[0], a, b).map_err(|e| e.to_string())?;
    let shift = |r: &mut (f64, f64)| *r = (r.0 - a, r.1 - a);
    survey.s_range.iter_mut().for_each(shift);
    for m in &mut survey.markings {
        shift(&mut m.s_range);
        m.samples.iter_mut().for_each(|p| p.0 -= a);
    }
    for c in survey.curbs.iter_mut().flatten() {
        c.samples.iter_mut().for_each(|p| p.0 -= a);
    }
    survey.elevation_residuals.retain(|r| (a..=b).contains(&r.s));
    survey.elevation_residuals.iter_mut().for_each(|r| r.s -= a);
    Ok(())
}

/// The surveyed road from the cross sections of `side`, as read back from its OpenDRIVE text
/// (so a build and its units grid against the same road), what was measured, and the part of
/// the axis road it is ([`part_of`], `seen`: the s extent of the CRG's candidates; None: all
/// of it): a road cut to the part starts at s 0, and what was measured is in its s. An error
/// when no point came near the road.
pub(crate) fn survey_of(
    s: &BuildConfig,
    axis: &AxisOf,
    road: &opendrive::Road,
    side: &Roadside,
    seen: Option<(f64, f64)>,
) -> Result<Surveyed> {
    survey_as(s, axis, road, side, seen, Member::Alone)
}

/// How a road is built: alone, or as a member of a network build, where it stays whole (its
/// links and the junctions refer to all of it) and keeps the axis road's lanes when the points
/// show none (a connecting road inside a junction has no marks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Member {
    Alone,
    Network,
}

/// [`survey_of`], as `member` says.
pub(crate) fn survey_as(
    s: &BuildConfig,
    axis: &AxisOf,
    road: &opendrive::Road,
    side: &Roadside,
    seen: Option<(f64, f64)>,
    member: Member,
) -> Result<Surveyed> {
    if side.points.kept == 0 {
        bail!("no points within {} m of road {} (check the axis, the road id and the CRS)", s.buffer, road.id);
    }
    let context = on_road(s, road);
    let sections = side.sections.as_ref().context("no cross sections were built")?;
    let (mut plain, mut survey) =
        survey_road(&axis.odr, road, sections, &[], &SurveyOptions::default()).map_err(|e| context(e.to_string()))?;
    let part = match member {
        Member::Alone => part_of(road, survey.s_range, seen, s.cell),
        Member::Network => None,
    };
    if let Some(p) = part {
        cut_survey(&mut plain, &mut survey, p).map_err(&context)?;
    }
    let no_lanes = plain.roads[0].lanes.lane_sections.iter().all(|sec| sec.left.is_none() && sec.right.is_none());
    if member == Member::Network && road.junction != "-1" {
        // A junction's connecting road keeps the network's lanes by design (they follow the
        // roads it joins; its pavement has no marks): its own road.xodr as the network's.
        plain.roads[0].lanes = road.lanes.clone();
        survey.findings.retain(|f| !f.check.starts_with("lanes"));
    } else if no_lanes && member == Member::Network {
        plain.roads[0].lanes = road.lanes.clone();
        survey.findings.push(pipeline::road::Finding {
            check: "lanes from the points",
            detail: format!(
                "no marking lines or curbs within --half-width {} m of the reference line: the network's lanes kept",
                s.half_width
            ),
        });
    } else if no_lanes {
        return Err(context(format!(
            "no lanes found in the points (no marking lines or curbs within --half-width {} m of the reference line): check the axis and --offset",
            s.half_width
        )));
    }
    let text = opendrive::write(&plain, &opendrive::WriteOptions::default())?;
    let plain = opendrive::read(&text).context("the surveyed road does not read back")?;
    Ok((plain, text, survey, part))
}

/// Stage: the CRG tiles `crg/road_NNN.crg` in `dir` (a unit's only, for a unit).
pub(crate) fn grid_tiles<'a, 'p: 'a>(
    st: &mut Stages<'p>,
    mut surface: SurfaceBuilder<'a>,
    s: &BuildConfig,
    dir: &Path,
    context: &dyn Fn(pipeline::Error) -> anyhow::Error,
) -> Result<(pipeline::SurfaceGrid, Vec<PathBuf>)> {
    let crg_dir = dir.join("crg");
    std::fs::create_dir_all(&crg_dir).with_context(|| format!("{}: cannot create", crg_dir.display()))?;
    let bar = st.progress();
    st.run("gridding the 1 cm road surface (CRG tiles)", Some(100), |_| {
        surface.on_progress(move |done, all| bar.advance((100 * done / all.max(1)) as u64));
        surface.write_tiles(s.tile, |k, _| crg_dir.join(format!("road_{k:03}.crg"))).map_err(context)
    })
}

/// What the last stages take: the road, the tiles, the roadside.
pub(crate) struct Gathered<'a> {
    pub axis: &'a AxisOf,
    pub plain: &'a opendrive::OpenDrive,
    pub survey: pipeline::road::SurveyReport,
    /// The part of the axis road that `plain` is (None: all of it).
    pub part: Option<(f64, f64)>,
    pub grid: report::GridSummary,
    /// The tiles, relative to the output directory.
    pub tile_paths: Vec<PathBuf>,
    pub side: &'a Roadside,
    /// Some when the ribbons were written already (their summary); None when
    /// [`finish_into`] writes them from `side`.
    pub ribbons: Option<Option<report::Ribbons>>,
    pub info: InputInfo,
    /// The passes' registration, as the report gives it (None: none).
    pub registration: Option<report::RegistrationSummary>,
    pub read_secs: f64,
    /// Work units before `finish` and their times added up, s (None: one build).
    pub units: Option<(usize, f64)>,
    pub hashing: std::thread::JoinHandle<Result<Vec<(u64, String)>>>,
}

/// Builds every product of `s` into the directory `dir`.
pub(crate) fn build_into(s: &BuildConfig, dir: &Path, progress: &dyn Progress) -> Result<Built> {
    let t0 = Instant::now();
    let fitted = matches!(s.axis, AxisSource::Trajectory { .. } | AxisSource::DrivePath);
    let mut st = Stages::new(if fitted { 7 } else { 6 }, progress);
    let hashing = hash_inputs(s);

    // 1. The axis.
    let what = match s.axis {
        AxisSource::DrivePath => "axis fitted to the drive path found in the points",
        _ => "axis fitted to the trajectory",
    };
    let axis = if fitted { st.run(what, None, |_| AxisOf::of_noted(s, progress))? } else { AxisOf::of(s)? };
    axis.write_into(dir)?;
    let road = axis.road(s)?;
    let s = &s.for_road(road);

    // 2. The passes registered (a read of their times and heights), then the points, once,
    // into both builders.
    let mut inputs = axis.inputs(s, progress)?;
    let registration = register_passes(&mut st, &mut inputs, s, || axis.inputs(s, &crate::Silent), progress)?;
    let job = RoadJob { axis: &axis, road, member: Member::Alone, hashing, t0 };
    build_road_into(s, job, inputs, registration, dir, st)
}

/// One road's build after its axis and registration: what [`build_road_into`] takes.
pub(crate) struct RoadJob<'a> {
    pub axis: &'a AxisOf,
    pub road: &'a opendrive::Road,
    pub member: Member,
    pub hashing: std::thread::JoinHandle<Result<Vec<(u64, String)>>>,
    pub t0: Instant,
}

/// The road `job.road` of `s` built into `dir` from `inputs` (registered by `registration`,
/// for the report): the points read once, the surveyed road, tiles, roadside, report and
/// manifest.
pub(crate) fn build_road_into(
    s: &BuildConfig,
    job: RoadJob,
    inputs: crate::inputs::Inputs,
    registration: Option<Registration>,
    dir: &Path,
    mut st: Stages,
) -> Result<Built> {
    let mut reading = [RoadReading::new(s, job.axis, job.road, &inputs, dir)?];
    let (read_secs, mut failed) = read_roads(&mut st, inputs, &mut reading)?;
    if let Some(Some(e)) = failed.pop() {
        return Err(e);
    }
    let [reading] = reading;
    complete_road(s, job, reading, read_secs, registration, dir, st)
}

/// A road's builders while the points are read: what the reading stage leaves for
/// [`complete_road`].
pub(crate) struct RoadReading<'a> {
    info: InputInfo,
    side: RoadsideBuilder<'a>,
    surface: SurfaceBuilder<'a>,
}

impl<'a> RoadReading<'a> {
    /// The builders of road `road` of `axis` for the points of `inputs` (the grids only where
    /// they reach: the products are cut to the surveyed part), spilling into `dir`.
    pub(crate) fn new(
        s: &BuildConfig,
        axis: &AxisOf,
        road: &'a opendrive::Road,
        inputs: &crate::inputs::Inputs,
        dir: &Path,
    ) -> Result<RoadReading<'a>> {
        let info = InputInfo { crs: inputs.crs.clone(), road: road.id.clone() };
        let context = on_road(s, road);
        let offset = axis.odr.header.offset;
        let points_box = inputs.points_box();
        let opts = RoadsideOptions { points_box, clip_to_points: true, ..roadside_options(s, None) };
        let side = RoadsideBuilder::new(road, offset, &opts).map_err(&context)?;
        let scope = SurfaceScope { points_box, unit: None };
        let surface = SurfaceBuilder::with(road, offset, surface_options(s, s.s_range), &surface_storage(dir), scope)
            .map_err(&context)?;
        Ok(RoadReading { info, side, surface })
    }

    fn add(&mut self, p: &scan::Points) -> Result<()> {
        feed(Some(&mut self.side), &mut self.surface, p)
    }
}

/// Stage: the points, once, into the builders of every road of `roads`; returns the seconds it
/// took and, per road, the error that stopped its builders (the others go on).
pub(crate) fn read_roads(
    st: &mut Stages,
    inputs: crate::inputs::Inputs,
    roads: &mut [RoadReading],
) -> Result<(f64, Vec<Option<anyhow::Error>>)> {
    let t = Instant::now();
    let total = inputs.total();
    let mut failed: Vec<Option<anyhow::Error>> = roads.iter().map(|_| None).collect();
    let what = match roads.len() {
        1 => "reading the points (voxels, ribbons, cross sections, CRG points)".to_string(),
        n => format!("reading the points for {n} roads (voxels, ribbons, cross sections, CRG points)"),
    };
    st.run(&what, Some(total), |bar| {
        inputs.stream_reporting(
            |done, _| bar.advance(done),
            |p| {
                for (r, f) in roads.iter_mut().zip(failed.iter_mut()) {
                    if f.is_none() {
                        *f = r.add(p).err();
                    }
                }
                Ok(())
            },
        )
    })?;
    Ok((t.elapsed().as_secs_f64(), failed))
}

/// The rest of road `job.road`'s build once its points are read (`reading`, in `read_secs`):
/// the surveyed road, tiles, roadside, report and manifest into `dir`.
pub(crate) fn complete_road(
    s: &BuildConfig,
    job: RoadJob,
    reading: RoadReading,
    read_secs: f64,
    registration: Option<Registration>,
    dir: &Path,
    mut st: Stages,
) -> Result<Built> {
    let RoadJob { axis, road, member, hashing, t0 } = job;
    let context = on_road(s, road);
    // Declared before the surface builder, which borrows it later: dropped after it.
    #[allow(clippy::needless_late_init)] // the drop order needs it
    let plain: opendrive::OpenDrive;
    let RoadReading { info, side, mut surface } = reading;
    let mut side = side.finish().map_err(&context)?;

    // 3. The surveyed road (the part of the axis road surveyed), then the CRG tiles as heights
    // above its surface; the roadside in its s.
    let (road_plain, _, survey, part) = survey_as(s, axis, road, &side, surface.seen().s_range, member)?;
    plain = road_plain;
    // The cross sections have given the road; the tiles need their memory (flat in length).
    side.sections = None;
    let shift = part.map_or(0.0, |p| p.0);
    surface.retarget(&plain.roads[0], None, shift).map_err(&context)?;
    if let Some(p) = part {
        side.cut_to(p).map_err(&context)?;
    }
    // The ribbons are final once the road's part is known: written now, so that their pixels
    // (as many as the road is long) are not held through the gridding and the tiles.
    let ribbons = report::Ribbons::of(&side);
    st.run("depth ribbons", None, |_| {
        write_ribbons(&side, &info, &dir.join("ribbons"), s.ribbon_cell, Path::new(&axis.label))
    })?;
    side.ribbons = None;
    let (grid, tile_paths) = grid_tiles(&mut st, surface, s, dir, &context)?;
    let tile_paths = tile_paths.iter().map(|p| p.strip_prefix(dir).unwrap_or(p).to_path_buf()).collect();
    let registration = registration.as_ref().map(registration_summary);
    let g = Gathered {
        axis,
        plain: &plain,
        survey,
        part,
        grid: report::GridSummary::of(&grid),
        tile_paths,
        side: &side,
        ribbons: Some(ribbons),
        info,
        registration,
        read_secs,
        units: None,
        hashing,
    };
    finish_into(s, dir, st, t0, g)
}

/// Stage: the passes' heights registered ([`crate::inputs::Inputs::register`]; `again` opens
/// the inputs once more for it), unless `--no-register` or the points carry no GPS time.
pub(crate) fn register_passes<'q>(
    st: &mut Stages,
    inputs: &mut crate::inputs::Inputs,
    s: &BuildConfig,
    again: impl FnOnce() -> Result<crate::inputs::Inputs<'q>>,
    progress: &dyn Progress,
) -> Result<Option<Registration>> {
    if !s.register || !inputs.have_time() {
        return Ok(None);
    }
    st.n += 1;
    let again = again()?;
    let total = again.total();
    let what = "registering the passes (their heights where the survey saw the ground twice)";
    let r = st.run(what, Some(total), |bar| inputs.register(again, |done, _| bar.advance(done)))?;
    if let Some(r) = &r {
        progress.note(&Note::Info(format!(
            "passes registered: they disagreed by {:.1} mm RMS in {} places, {:.1} mm after (corrections up to {:.1} mm)",
            r.rms_before * 1e3,
            r.kept,
            r.rms_after * 1e3,
            r.max_abs() * 1e3
        )));
    }
    Ok(r)
}

/// The registration as the report gives it.
pub(crate) fn registration_summary(r: &Registration) -> report::RegistrationSummary {
    report::RegistrationSummary {
        what: "the trajectory's vertical error as a function of GPS time, from where the passes saw the same ground, taken off every point (half of each disagreement to each pass)".into(),
        observations: r.observations,
        kept: r.kept,
        rms_disagreement_before_m: r.rms_before,
        rms_disagreement_after_m: r.rms_after,
        max_correction_m: r.max_abs(),
        knot_spacing_s: r.dt,
    }
}

/// The registration whole (its knots), as a plan keeps it for the work units.
pub(crate) fn registration_record(r: &Registration) -> Value {
    json!({
        "t0": r.t0, "dt": r.dt, "dz": r.dz, "observations": r.observations, "kept": r.kept,
        "rms_before": r.rms_before, "rms_after": r.rms_after,
    })
}

/// A registration back from [`registration_record`]'s JSON (null: none).
pub(crate) fn registration_of(v: &Value) -> Option<Registration> {
    let f = |k: &str| v[k].as_f64();
    let dz: Vec<f64> = v["dz"].as_array()?.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>()?;
    (dz.len() >= 2 && f("dt")? > 0.0).then_some(())?;
    Some(Registration {
        t0: f("t0")?,
        dt: f("dt")?,
        dz,
        observations: v["observations"].as_u64()? as usize,
        kept: v["kept"].as_u64()? as usize,
        rms_before: f("rms_before")?,
        rms_after: f("rms_after")?,
    })
}

/// The inputs' hashes, on a thread of their own while the points are read.
pub(crate) fn hash_inputs(s: &BuildConfig) -> std::thread::JoinHandle<Result<Vec<(u64, String)>>> {
    let paths = s.input.clone();
    std::thread::spawn(move || paths.iter().map(|p| hash_file(p)).collect::<Result<Vec<_>>>())
}

/// The last stages: each tile's features, render and checks, the road with its objects and
/// CRG links, the roadside, the report and the manifest.
pub(crate) fn finish_into(s: &BuildConfig, dir: &Path, mut st: Stages, t0: Instant, g: Gathered) -> Result<Built> {
    // 4. Each tile in turn (one in memory): its potholes and manholes, its render with them
    // marked, its coverage and checks; then the road with the objects and the links.
    let tiles = st.run("potholes, manholes, renders and the CRG links", Some(g.tile_paths.len() as u64), |bar| {
        let (mut features, mut links, mut tiles) = (Vec::new(), Vec::new(), Vec::new());
        for rel in &g.tile_paths {
            let file = rel.display().to_string();
            let crg = opencrg::read_file(dir.join(rel))?;
            let found = pipeline::road::find_depressions(&crg);
            let marks: Vec<(&'static str, [f64; 4])> = found
                .iter()
                .map(|f| {
                    (f.kind, [f.s - 0.5 * f.length, f.s + 0.5 * f.length, f.t - 0.5 * f.width, f.t + 0.5 * f.width])
                })
                .collect();
            // About 2.5 M pixels: 2 cm per pixel on a 150 m tile, strips of 2,500 pixels; no
            // footer and no marks: the report draws the legend, the scale and the boxes.
            let png = file.replace(".crg", ".png");
            let opts = opencrg::render::RenderOptions {
                title: file.clone(),
                max_pixels: 2_500_000,
                strip_width: 2500,
                footer: false,
                ..Default::default()
            };
            let info = opencrg::render::render(&crg, &dir.join(&png), &opts)?;
            features.extend(found);
            links.push(pipeline::road::crg_link(&file, &crg));
            let mut tile = report::Tile::of(file, png, &crg);
            tile.render = Some(info);
            tile.marks = marks;
            tiles.push(tile);
            bar.advance(tiles.len() as u64);
        }
        Ok((features, links, tiles))
    })?;
    let (mut features, links, tiles) = tiles;
    let mut odr = g.plain.clone();
    pipeline::road::attach_surface(&mut odr.roads[0], &mut features, links);
    let mut survey = g.survey;
    survey.features = features;
    crate::xodr::write_checked(&odr, &dir.join("road.xodr"))?;
    let side = g.side;

    // 5. The roadside.
    let written = g.ribbons.is_some();
    let what = if written { "roadside voxels" } else { "roadside voxels and depth ribbons" };
    let voxels = st.run(what, None, |_| {
        let (obj, glb) = (dir.join("scene.obj"), dir.join("scene.glb"));
        let label = PathBuf::from(&g.axis.label);
        let out = VoxelOut { obj: &obj, glb: Some(&glb), colouring: voxel::Colouring::Class, axis: &label };
        let v = write_voxels(side, &g.info, &out, s.buffer)?;
        if !written {
            write_ribbons(side, &g.info, &dir.join("ribbons"), s.ribbon_cell, &label)?;
        }
        Ok(v)
    })?;
    let ribbons = g.ribbons.unwrap_or_else(|| report::Ribbons::of(side));

    // 6. Report and manifest.
    // The part of the axis road that road.xodr is, as the report and the manifest record it.
    let part = g.part.map(|(a, b)| report::AxisPart {
        road: g.info.road.clone(),
        s: [a, b],
        margin: PART_MARGIN,
        note: format!("road.xodr covers s {a}..{b} of the axis road {} (its s 0 is the axis road's s {a}); every product is in its s", g.info.road),
    });
    let hashes = g.hashing.join().map_err(|_| anyhow::anyhow!("internal: the hashing thread failed"))??;
    let stages: Vec<report::StageTime> =
        st.times.iter().map(|(w, t)| report::StageTime { stage: w.clone(), seconds: *t }).collect();
    let (report, report_json) = st.run("report and manifest", None, |_| {
        let total_secs = t0.elapsed().as_secs_f64() + g.units.map_or(0.0, |u| u.1);
        let performance = report::Performance {
            points_read: side.points.offered,
            seconds: total_secs,
            work_units: g.units.map_or(0, |u| u.0 + 1),
            reading_seconds: g.read_secs,
            points_per_second: side.points.offered as f64 / total_secs.max(1e-9),
            peak_rss_mb: peak_rss_mb(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let facts = report::Facts {
            axis_label: &g.axis.label,
            axis_fit: g.axis.fit.as_ref().map(|(b, tol, _)| (b, *tol)),
            odr: &odr,
            axis: &g.axis.odr,
            survey: &survey,
            grid: &g.grid,
            tiles: &tiles,
            voxels: &voxels,
            side,
            ribbons,
            inputs: &s.input.iter().map(|p| shown(p, dir)).collect::<Vec<_>>(),
            crs: g.info.crs.as_ref().map(|c| c.0.as_str()),
            crs_wkt: g.info.crs.as_ref().and_then(|c| c.1.as_deref()),
            crs_hint: s.crs.as_deref(),
            part: part.as_ref(),
            registration: g.registration.as_ref(),
            performance: &performance,
            stages: &stages,
        };
        let rep = report::report(&facts);
        let text = rep.json()?;
        voxel::write_atomic(&dir.join("report.json"), |w| w.write_all(&text))?;
        let html = report::html(&rep, &facts);
        voxel::write_atomic(&dir.join("report.html"), |w| w.write_all(html.as_bytes()))?;
        Ok((rep, text))
    })?;
    let part = part.as_ref().map(serde_json::to_value).transpose()?;
    write_manifest(s, dir, &hashes, &st.times, t0.elapsed().as_secs_f64(), part.as_ref())?;
    Ok(Built { report, report_json })
}
