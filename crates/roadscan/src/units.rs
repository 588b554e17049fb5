//! `roadscan plan` and `roadscan build --unit N`: a build split into work units that a batch
//! engine (Slurm job arrays, Kubernetes indexed Jobs) runs on many machines, giving the same
//! products as one `build`.
//!
//! The road is split along s into `n` ranges of `--unit-tiles` CRG tiles. Four stages run in
//! turn; the units of a stage are independent:
//! - `points` (units 0..n): a range's points into the roadside grids (voxels, ribbons, cross
//!   sections) and a count of its CRG candidates; written as a part. Every point belongs to
//!   one range; the grids' sums are integers and the ribbons keep the nearest point by a total
//!   order, so the parts add up to the grids of one build exactly.
//! - `road` (unit n): the parts merged, the surveyed road (`road.xodr` without its CRGs) and
//!   the CRG grid's extent.
//! - `surface` (units n+1..=2n): a range's CRG tiles, gridded against that road from the points
//!   that reach them (a slab and the gap filling's reach beyond the tiles).
//! - `finish` (unit 2n+1): the parts merged again, the tiles searched and rendered, the road
//!   completed, the voxels, ribbons, report and manifest written to `--out` (staged and
//!   renamed, as `build` does); the work directory is removed.
//!
//! A unit reads only the inputs whose header bounds reach its range's corridor. Everything
//! lives in the work directory `OUT.work` beside `--out`; each unit writes its files
//! atomically, so a failed or killed unit is simply run again.

use crate::build::{
    finish_into, grid_tiles, hash_inputs, on_road, read_points, register_passes, registration_of, registration_record,
    registration_summary, roadside_options, surface_options, surface_storage, survey_of, AxisOf, Built, Gathered,
};
use crate::config::{AxisSource, BuildConfig};
use crate::manifest::write_json;
use crate::progress::{Note, Progress, Stages};
use crate::roadside::InputInfo;
use crate::staging::Outputs;
use anyhow::{bail, Context, Result};
use pipeline::surface::{clip_grid, grid_extent, Covered, SurfaceUnit};
use pipeline::{Roadside, RoadsideBuilder, SurfaceBuilder};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The work directory of a build whose products go to `out`: `OUT.work` beside it.
pub fn work_dir(out: &Path) -> PathBuf {
    let name = out.file_name().map_or_else(|| "roadscan-out".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!("{name}.work"))
}

/// What a unit does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stage {
    /// Points of range i into the roadside part i.
    Points(usize),
    /// The surveyed road from the parts.
    Road,
    /// CRG tiles of range i.
    Surface(usize),
    /// Everything else, into `--out`.
    Finish,
}

/// The plan (`plan.json`): the ranges and the settings it was made with.
#[derive(Debug, Serialize, Deserialize)]
struct Plan {
    /// The version that made it.
    roadscan: String,
    units: usize,
    unit_tiles: usize,
    /// The road's part built, m of s.
    s_range: (f64, f64),
    /// The settings (parameters and inputs) as JSON, which every unit must match.
    settings: Value,
}

/// What a `points` unit saw (`points/NNNN.json`).
#[derive(Debug, Serialize, Deserialize)]
struct PointsRecord {
    /// CRG candidates of its range.
    near: u64,
    /// Their s extent.
    s_seen: Option<(f64, f64)>,
    /// Points read from each input it read, by the input's index.
    points_read: Vec<(usize, u64)>,
    reading_seconds: f64,
    /// The unit's whole time, s.
    #[serde(default)]
    seconds: f64,
}

/// What the `road` unit found (`road.json`; the road itself is `road.xodr`).
#[derive(Debug, Serialize, Deserialize)]
struct RoadRecord {
    /// The CRG grid's s extent, m (in the axis road's s; within `part`).
    grid_s_range: (f64, f64),
    /// The part of the axis road that `road.xodr` is, m of its s (None: all of it).
    #[serde(default)]
    part: Option<(f64, f64)>,
    /// The unit's whole time, s.
    #[serde(default)]
    seconds: f64,
}

/// What a `surface` unit gridded (`surface/NNNN.json`): its tiles and its rows' counts.
#[derive(Debug, Serialize, Deserialize)]
struct SurfaceRecord {
    /// File names of its tiles (in `surface/NNNN/crg/`).
    tiles: Vec<String>,
    /// Nodes with a height in its rows, and nodes of the whole grid.
    covered: usize,
    nodes: usize,
    /// Nodes with a height per v column in its rows, and its rows.
    #[serde(default)]
    columns: (Vec<usize>, usize),
    /// Nodes with a height between the outermost lane borders in its rows, and nodes there.
    lanes: (usize, usize),
    estimated: usize,
    filled: usize,
    kept: u64,
    reading_seconds: f64,
    /// The unit's whole time, s.
    #[serde(default)]
    seconds: f64,
}

/// Writes a record as JSON, atomically.
fn write_record(path: &Path, r: &impl Serialize) -> Result<()> {
    write_json(path, &serde_json::to_value(r)?)?;
    Ok(())
}

/// Reads a record; `missing` says why a missing file is missing.
fn read_record<T: DeserializeOwned>(path: &Path, missing: &str) -> Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: missing: {missing}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a record of this roadscan", path.display()))
}

/// Why unit `unit`'s record is missing.
fn not_run(unit: usize) -> String {
    format!("unit {unit} has not run (or failed)")
}

impl Plan {
    /// The plan of ranges of `unit_tiles` tiles over `s_range`.
    fn new(s: &BuildConfig, unit_tiles: usize, s_range: (f64, f64)) -> Plan {
        let length = unit_tiles as f64 * s.tile;
        let units = (((s_range.1 - s_range.0) / length - 1e-9).ceil() as usize).max(1);
        let roadscan = env!("CARGO_PKG_VERSION").to_string();
        Plan { roadscan, units, unit_tiles, s_range, settings: settings_json(s) }
    }

    fn stage(&self, unit: usize) -> Option<Stage> {
        let n = self.units;
        match unit {
            u if u < n => Some(Stage::Points(u)),
            u if u == n => Some(Stage::Road),
            u if u <= 2 * n => Some(Stage::Surface(u - n - 1)),
            u if u == 2 * n + 1 => Some(Stage::Finish),
            _ => None,
        }
    }

    /// Length of a unit's range, m.
    fn length(&self, s: &BuildConfig) -> f64 {
        self.unit_tiles as f64 * s.tile
    }

    /// The s range of the points of unit `i` (open at the road's ends, so every point has
    /// one unit).
    fn part(&self, s: &BuildConfig, i: usize) -> (f64, f64) {
        let l = self.length(s);
        let a = if i == 0 { f64::NEG_INFINITY } else { self.s_range.0 + i as f64 * l };
        let b = if i + 1 == self.units { f64::INFINITY } else { self.s_range.0 + (i + 1) as f64 * l };
        (a, b)
    }

    /// One line of `plan`'s output per unit.
    fn lines(&self, s: &BuildConfig) -> Vec<Value> {
        let n = self.units;
        let mut out = Vec::new();
        for i in 0..n {
            let (a, b) = self.part(s, i);
            let (a, b) = (a.max(self.s_range.0), b.min(self.s_range.1));
            out.push(json!({"unit": i, "stage": "points", "s_range": [a, b], "after": null}));
        }
        out.push(json!({"unit": n, "stage": "road", "after": "points"}));
        for i in 0..n {
            let tiles = [i * self.unit_tiles, (i + 1) * self.unit_tiles];
            out.push(json!({"unit": n + 1 + i, "stage": "surface", "tiles": tiles, "after": "road"}));
        }
        out.push(json!({"unit": 2 * n + 1, "stage": "finish", "after": "surface"}));
        out
    }
}

/// The settings as the plan pins them (what a unit must be run with).
fn settings_json(s: &BuildConfig) -> Value {
    let mut v = s.to_json();
    v["input"] = json!(s.input.iter().map(|p| p.display().to_string()).collect::<Vec<_>>());
    v["out"] = json!(s.out.display().to_string());
    v
}

/// A plan made: its units (one JSON line each, as `roadscan plan` prints them) and where it
/// is kept.
#[derive(Debug)]
pub struct Planned {
    /// One line per unit: `{"unit", "stage", "s_range" or "tiles", "after"}`.
    pub lines: Vec<Value>,
    /// Units of each of the `points` and `surface` stages (the plan has 2n+2).
    pub units: usize,
    /// Points in all the inputs.
    pub points: u64,
    /// The work directory.
    pub work: PathBuf,
}

/// Plans the build `s` as work units of `unit_tiles` CRG tiles each: fits the axis (when
/// fitted), registers the passes once for every unit, and writes the plan into the work
/// directory ([`work_dir`]).
pub fn plan(s: &BuildConfig, unit_tiles: usize, progress: &dyn Progress) -> Result<Planned> {
    if unit_tiles == 0 {
        bail!("--unit-tiles must be at least 1");
    }
    Outputs::new(s.inputs()).dir(&s.out, "manifest.json")?;
    let work = work_dir(&s.out);
    let axis = AxisOf::of(s)?;
    let road = axis.road(s)?;
    // A bad input fails now, not in a unit on some node later.
    let mut inputs = axis.inputs(s, progress)?;
    let total = inputs.total();
    // The passes are registered once, from all the points, for every unit (each unit reads a
    // part of them and would find another registration).
    let mut st = Stages::new(0, progress);
    let registration = register_passes(&mut st, &mut inputs, s, || axis.inputs(s, &crate::Silent), progress)?;
    drop(inputs);
    let plan = Plan::new(s, unit_tiles, s.s_range.unwrap_or((0.0, road.length)));
    let units = plan.units;
    // A new plan starts from nothing: parts of another plan must not mix in.
    if work.exists() {
        if !work.join("plan.json").exists() {
            bail!("{}: exists and is not a roadscan work directory (no plan.json); remove it", work.display());
        }
        std::fs::remove_dir_all(&work).with_context(|| format!("{}: cannot remove", work.display()))?;
    }
    std::fs::create_dir_all(&work).with_context(|| format!("{}: cannot create", work.display()))?;
    axis.write_into(&work)?;
    let record = registration.as_ref().map_or(Value::Null, registration_record);
    write_json(&work.join("registration.json"), &record)?;
    write_record(&work.join("plan.json"), &plan)?;
    Ok(Planned { lines: plan.lines(s), units, points: total, work })
}

fn read_plan(work: &Path, s: &BuildConfig) -> Result<Plan> {
    let path = work.join("plan.json");
    let plan: Plan = read_record(&path, "run `roadscan plan` with these options first")?;
    if plan.roadscan != env!("CARGO_PKG_VERSION") {
        bail!(
            "{}: made by roadscan {}, this is {}; plan again",
            path.display(),
            plan.roadscan,
            env!("CARGO_PKG_VERSION")
        );
    }
    if plan.settings != settings_json(s) {
        bail!("{}: planned with other options than these; give the plan's options or plan again", path.display());
    }
    Ok(plan)
}

/// What a unit did.
#[derive(Debug)]
pub enum UnitDone {
    /// A unit of the `points`, `road` or `surface` stage: its files are in the work directory.
    Stage(Stage),
    /// The `finish` unit: the products are in the output directory.
    Finished(Box<Built>),
}

/// Runs unit `unit` of the plan in the work directory of `s.out`.
pub fn run_unit(s: &BuildConfig, unit: usize, progress: &dyn Progress) -> Result<UnitDone> {
    let t0 = Instant::now();
    let work = work_dir(&s.out);
    let plan = read_plan(&work, s).with_context(|| format!("--unit {unit}"))?;
    let stage = plan.stage(unit).with_context(|| {
        format!("--unit {unit}: the plan has units 0..{} ({})", 2 * plan.units + 1, work.join("plan.json").display())
    })?;
    // The axis as planned (a fitted one from the plan's axis.xodr, not fitted again).
    let axis = match (&s.axis, stage) {
        (AxisSource::Trajectory { .. } | AxisSource::DrivePath, st) if st != Stage::Finish => {
            let path = match &s.axis {
                AxisSource::Trajectory { path, .. } => path.clone(),
                _ => s.input.first().cloned().unwrap_or_default(),
            };
            let p = work.join("axis.xodr");
            AxisOf { odr: opendrive::read_file(&p)?, path, label: "axis.xodr".into(), fit: None, made: None }
        }
        _ => AxisOf::of(s)?,
    };
    let road = axis.road(s)?;
    let s = &s.for_road(road);
    let ctx = Ctx { s, plan: &plan, axis: &axis, road, work: &work, progress };
    match stage {
        Stage::Points(i) => ctx.points(i, t0)?,
        Stage::Road => ctx.road(t0)?,
        Stage::Surface(i) => ctx.surface(i, t0)?,
        Stage::Finish => return ctx.finish(t0).map(|b| UnitDone::Finished(Box::new(b))),
    }
    Ok(UnitDone::Stage(stage))
}

/// Map x, y bounds of the corridor of s in `a..b` (clamped to the road), `pad` wider.
fn corridor(axis: &AxisOf, road: &opendrive::Road, (a, b): (f64, f64), pad: f64) -> ([f64; 2], [f64; 2]) {
    let e = opendrive::RoadEval::new(road);
    let place = axis.odr.header.offset.unwrap_or_default().placement();
    let (a, b) = (a.max(0.0).min(e.length()), b.max(0.0).min(e.length()));
    let n = ((b - a) / 1.0).ceil().max(1.0) as usize;
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for k in 0..=n {
        let p = e.pose(a + (b - a) * k as f64 / n as f64);
        let [x, y, _] = place.to_map([p.x, p.y, 0.0]);
        lo = [lo[0].min(x - pad), lo[1].min(y - pad)];
        hi = [hi[0].max(x + pad), hi[1].max(y + pad)];
    }
    (lo, hi)
}

/// Unit i's roadside part.
fn part_path(work: &Path, i: usize) -> PathBuf {
    work.join(format!("points/{i:04}.part"))
}

/// What the points units saw, together.
struct PointsSeen {
    /// CRG candidates counted.
    near: u64,
    /// Their s extent.
    s_range: Option<(f64, f64)>,
    /// Each unit's record.
    units: Vec<PointsRecord>,
}

/// What every unit works with.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    s: &'a BuildConfig,
    plan: &'a Plan,
    axis: &'a AxisOf,
    road: &'a opendrive::Road,
    /// The work directory.
    work: &'a Path,
    progress: &'a dyn Progress,
}

impl<'a> Ctx<'a> {
    /// The inputs that reach the corridor of s in `range` (and a few metres beyond it).
    fn inputs_for(&self, range: (f64, f64)) -> Result<crate::inputs::Inputs<'a>> {
        let Ctx { s, axis, road, progress, .. } = *self;
        let mut inputs = axis.inputs(s, progress)?;
        inputs.set_registration(self.registration()?);
        // Beyond the range: the CRG's slabs and gap filling (a few metres), and 1 m between the
        // sampled poses.
        const PAD: f64 = 8.0;
        let (lo, hi) = corridor(axis, road, (range.0 - PAD, range.1 + PAD), s.buffer + 2.0);
        inputs.retain_reaching(lo, hi);
        Ok(inputs)
    }

    /// A `points` unit: range i's points into the roadside part i and the candidate count.
    fn points(&self, i: usize, t0: Instant) -> Result<()> {
        let Ctx { s, plan, axis, road, work, progress } = *self;
        let part = plan.part(s, i);
        let context = on_road(s, road);
        let shown = (part.0.max(plan.s_range.0), part.1.min(plan.s_range.1));
        let inputs = self.inputs_for(shown)?;
        let offset = axis.odr.header.offset;
        let points_box = inputs.points_box();
        let opts = pipeline::RoadsideOptions { points_box, ..roadside_options(s, Some(part)) };
        let mut side = RoadsideBuilder::new(road, offset, &opts).map_err(&context)?;
        let unit = Some(SurfaceUnit::Count(part.0, part.1));
        let (opts, scope) = (surface_options(s, s.s_range), pipeline::SurfaceScope { points_box, unit });
        let mut surface = SurfaceBuilder::with(road, offset, opts, &surface_storage(work), scope).map_err(&context)?;
        let mut st = Stages::new(1, progress);
        let what = format!("unit {i}: the points of s {:.1}..{:.1}", shown.0, shown.1);
        let (secs, counts) = read_points(&mut st, inputs, Some(&mut side), &mut surface, &what)?;
        let side = side.finish().map_err(&context)?;
        let seen = surface.seen();
        std::fs::create_dir_all(work.join("points")).with_context(|| format!("{}: cannot create", work.display()))?;
        voxel::write_atomic(&part_path(work, i), |w| w.write_all(&side.to_part()))?;
        let r = PointsRecord {
            near: seen.near,
            s_seen: seen.s_range,
            points_read: counts,
            reading_seconds: secs,
            seconds: t0.elapsed().as_secs_f64(),
        };
        write_record(&work.join(format!("points/{i:04}.json")), &r)?;
        Ok(())
    }

    /// The roadside of all the points: the units' parts added up.
    fn merged(&self) -> Result<Roadside> {
        let Ctx { s, plan, axis, road, work, .. } = *self;
        let context = on_road(s, road);
        let mut side = RoadsideBuilder::new(road, axis.odr.header.offset, &roadside_options(s, None))
            .map_err(&context)?
            .finish()
            .map_err(&context)?;
        for i in 0..plan.units {
            let p = part_path(work, i);
            let bytes = std::fs::read(&p).with_context(|| format!("{}: missing: {}", p.display(), not_run(i)))?;
            side.merge_part(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        }
        Ok(side)
    }

    /// The plan's registration of the passes (None: none).
    fn registration(&self) -> Result<Option<pipeline::registration::Registration>> {
        let path = self.work.join("registration.json");
        let v: Value = read_record(&path, "run `roadscan plan` with these options first")?;
        match v {
            Value::Null => Ok(None),
            v => registration_of(&v)
                .map(Some)
                .with_context(|| format!("{}: not a registration of this roadscan; plan again", path.display())),
        }
    }

    /// What the points units saw, from their JSON.
    fn seen(&self) -> Result<PointsSeen> {
        let Ctx { plan, work, .. } = *self;
        let (mut near, mut range): (u64, Option<(f64, f64)>) = (0, None);
        let mut all = Vec::new();
        for i in 0..plan.units {
            let r: PointsRecord = read_record(&work.join(format!("points/{i:04}.json")), &not_run(i))?;
            near += r.near;
            if let Some((a, b)) = r.s_seen {
                range = Some(range.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
            }
            all.push(r);
        }
        Ok(PointsSeen { near, s_range: range, units: all })
    }

    /// The `road` unit: the parts merged, the surveyed road and the CRG grid's extent.
    fn road(&self, t0: Instant) -> Result<()> {
        let Ctx { s, axis, road, work, .. } = *self;
        let side = self.merged()?;
        let seen = self.seen()?.s_range;
        let (_, text, _, part) = survey_of(s, axis, road, &side, seen)?;
        let grid = match s.s_range {
            Some(r) => r,
            None => grid_extent(seen, s.cell).map_err(on_road(s, road))?,
        };
        // The grid of one build's retargeted builder: clipped to the part.
        let grid = match part {
            Some(p) => clip_grid(grid, p, s.cell).map_err(on_road(s, road))?,
            None => grid,
        };
        voxel::write_atomic(&work.join("road.xodr"), |w| w.write_all(text.as_bytes()))?;
        let seconds = t0.elapsed().as_secs_f64();
        write_record(&work.join("road.json"), &RoadRecord { grid_s_range: grid, part, seconds })?;
        Ok(())
    }

    /// What the `road` unit found: the CRG grid's s extent and the part of the axis road.
    fn road_record(&self) -> Result<RoadRecord> {
        read_record(&self.work.join("road.json"), &not_run(self.plan.units))
    }

    /// A `surface` unit: range i's CRG tiles.
    fn surface(&self, i: usize, t0: Instant) -> Result<()> {
        let Ctx { s, plan, axis, road, work, progress } = *self;
        let n = plan.units;
        let RoadRecord { grid_s_range: grid, part, .. } = self.road_record()?;
        let plain = opendrive::read_file(work.join("road.xodr"))?;
        let tiles = (i * plan.unit_tiles, (i + 1) * plan.unit_tiles);
        let range = (grid.0 + tiles.0 as f64 * s.tile, grid.0 + tiles.1 as f64 * s.tile);
        let context = on_road(s, road);
        let dir = work.join(format!("surface/{i:04}"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("{}: cannot clear", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        let unit = SurfaceUnit::Tiles { tile: s.tile, first: tiles.0, end: tiles.1 };
        let (opts, scope) =
            (surface_options(s, Some(grid)), pipeline::SurfaceScope { unit: Some(unit), points_box: None });
        let mut surface = SurfaceBuilder::with(road, axis.odr.header.offset, opts, &surface_storage(&dir), scope)
            .map_err(&context)?;
        let mut st = Stages::new(2, progress);
        let mut secs = 0.0;
        if range.0 <= grid.1 {
            let inputs = self.inputs_for(range)?;
            let what = format!("unit {}: the CRG points of s {:.1}..{:.1}", n + 1 + i, range.0, range.1.min(grid.1));
            secs = read_points(&mut st, inputs, None, &mut surface, &what)?.0;
        }
        surface.retarget(&plain.roads[0], None, part.map_or(0.0, |p| p.0)).map_err(&context)?;
        let (g, paths) = grid_tiles(&mut st, surface, s, &dir, &context)?;
        let r = SurfaceRecord {
            tiles: paths.iter().filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).collect(),
            covered: g.covered.with_height,
            nodes: g.covered.nodes,
            columns: (g.column_covered.per_column.clone(), g.column_covered.rows),
            lanes: (g.lane_covered.with_height, g.lane_covered.nodes),
            estimated: g.estimated,
            filled: g.filled,
            kept: g.points.kept,
            reading_seconds: secs,
            seconds: t0.elapsed().as_secs_f64(),
        };
        write_record(&work.join(format!("surface/{i:04}.json")), &r)?;
        Ok(())
    }

    /// The `finish` unit: everything else, into `--out`.
    fn finish(&self, t0: Instant) -> Result<Built> {
        let Ctx { s, plan, axis, road, work, progress } = *self;
        let n = plan.units;
        let hashing = hash_inputs(s);
        // Fitted again for the report: it must be the axis the units used.
        if let Some((_, _, text)) = &axis.fit {
            let planned = std::fs::read_to_string(work.join("axis.xodr"))
                .with_context(|| format!("{}: cannot read", work.join("axis.xodr").display()))?;
            if &planned != text {
                bail!(
                    "the trajectory fits another axis than the plan's ({}): plan again",
                    work.join("axis.xodr").display()
                );
            }
        }
        let mut side = self.merged()?;
        let PointsSeen { near, units: points, s_range: seen } = self.seen()?;
        let RoadRecord { grid_s_range: grid_range, part: planned_part, seconds: road_secs } = self.road_record()?;
        let (plain, text, survey, part) = survey_of(s, axis, road, &side, seen)?;
        side.sections = None;
        let planned = std::fs::read_to_string(work.join("road.xodr"))
            .with_context(|| format!("{}: missing: {}", work.join("road.xodr").display(), not_run(n)))?;
        if planned != text || planned_part != part {
            bail!(
                "the points give another road than unit {n} made ({}): run the units again",
                work.join("road.xodr").display()
            );
        }
        // Points read: each input's count from a unit that read it, its header's from none did.
        let inputs = axis.inputs(s, progress)?;
        let mut read: Vec<Option<u64>> = vec![None; s.input.len()];
        let mut read_secs = 0.0;
        // The other units' times, added up (as if run one after another).
        let mut unit_secs = road_secs;
        for r in &points {
            for &(k, c) in &r.points_read {
                if let Some(slot) = read.get_mut(k) {
                    *slot = Some(c);
                }
            }
            read_secs += r.reading_seconds;
            unit_secs += r.seconds;
        }
        let offered: u64 =
            inputs.header_counts().iter().map(|&(k, h)| read.get(k).copied().flatten().unwrap_or(h)).sum();
        side.points.offered = offered;
        let info = InputInfo { crs: inputs.crs.clone(), road: road.id.clone() };
        drop(inputs);

        // The tiles and their counts.
        let outputs = Outputs::new(s.inputs());
        let dir = outputs.dir(&s.out, "manifest.json")?;
        std::fs::create_dir_all(dir.join("crg")).with_context(|| format!("{}: cannot create", dir.display()))?;
        let (mut estimated, mut filled, mut kept) = (0usize, 0usize, 0u64);
        // Nodes with a height per v column, over all the units' rows: the coverage of one build.
        let (mut columns, mut rows) = (Vec::<usize>::new(), 0usize);
        let mut lanes = Covered::default();
        let mut tile_paths = Vec::new();
        for i in 0..n {
            let r: SurfaceRecord = read_record(&work.join(format!("surface/{i:04}.json")), &not_run(n + 1 + i))?;
            if columns.len() < r.columns.0.len() {
                columns.resize(r.columns.0.len(), 0);
            }
            columns.iter_mut().zip(&r.columns.0).for_each(|(a, b)| *a += b);
            rows += r.columns.1;
            lanes = lanes + Covered { with_height: r.lanes.0, nodes: r.lanes.1 };
            estimated += r.estimated;
            filled += r.filled;
            kept += r.kept;
            read_secs += r.reading_seconds;
            unit_secs += r.seconds;
            for name in &r.tiles {
                let (from, rel) =
                    (work.join(format!("surface/{i:04}/crg/{name}")), PathBuf::from(format!("crg/{name}")));
                if std::fs::hard_link(&from, dir.join(&rel)).is_err() {
                    std::fs::copy(&from, dir.join(&rel)).with_context(|| format!("{}: cannot copy", from.display()))?;
                }
                tile_paths.push(rel);
            }
        }
        let want = pipeline::surface::tile_count(grid_range, s.cell, s.tile);
        if tile_paths.len() != want {
            bail!("the surface units wrote {} CRG tiles of the grid's {want}: run them again", tile_paths.len());
        }
        if tile_paths.is_empty() {
            bail!("the surface units wrote no CRG tiles");
        }
        let covered = pipeline::surface::surveyed_coverage(&columns, rows);
        if let Some(p) = part {
            side.cut_to(p).map_err(on_road(s, road))?;
        }
        // The counts of one build's grid: the units' added up.
        let grid = crate::report::GridSummary {
            coverage: pipeline::surface::coverage_of(lanes, covered),
            estimated,
            filled,
            points: pipeline::surface::PointCounts { offered, near, kept },
        };
        axis.write_into(&dir)?;
        let st = Stages::new(3, progress);
        let registration = self.registration()?.as_ref().map(registration_summary);
        let g = Gathered {
            axis,
            plain: &plain,
            survey,
            part,
            grid,
            tile_paths,
            side: &side,
            ribbons: None,
            info,
            registration,
            read_secs,
            units: Some((2 * n + 1, unit_secs)),
            hashing,
        };
        let built = finish_into(s, &dir, st, t0, g)?;
        outputs.commit()?;
        if let Err(e) = std::fs::remove_dir_all(work) {
            progress.note(&Note::Warning(format!("{}: cannot remove the work directory: {e}", work.display())));
        }
        Ok(built)
    }
}
