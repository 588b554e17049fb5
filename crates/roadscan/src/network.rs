//! A network build (issue 26, source (a)): an existing network `.xodr` updated from its survey.
//!
//! `build --axis network.xodr` without `--road` on a file of several roads builds every road
//! (connecting roads inside junctions included) as one build builds one road
//! (`build::RoadReading`, `build::complete_road`), each into `OUT/roads/ID/` with its own tiles, roadside,
//! report and manifest, and then joins them into one `OUT/road.xodr`: every road with its id,
//! its links and its surveyed elevation, superelevation, lanes, marks, objects and
//! `<surface><CRG>` links (to `roads/ID/crg/...`), and the file's junctions unchanged.
//! The network may also be made first: from OSM ways (`build --osm`, source (b)) or from the
//! passes of the trajectory (`build --trajectory` without `--pass` over passes that meet at
//! junctions, source (c)); it is then written as `OUT/axis.xodr` and built the same way.
//!
//! A connecting road keeps the network's lanes (they follow the roads it joins; a junction's
//! pavement has no marks), and so does a road whose lanes the survey found with other ids at
//! its ends than the network's (the junctions' lane links would not hold); a road without
//! points near it is kept as the network has it. Both are said in the report, and neither fails the build.
//! The passes are registered once for all the roads; the points are then read once per batch
//! of roads (file order, at most 250 m of road a batch), each chunk handed to every
//! road's builders of the batch, so each road gets the points a build of it alone gets, in the
//! same order, and the same product bytes.

use crate::build::{
    complete_road, hash_inputs, read_roads, register_passes, registration_summary, AxisOf, Member, RoadJob, RoadReading,
};
use crate::config::{AxisSource, BuildConfig};
use crate::manifest::{write_json, write_manifest};
use crate::progress::{Note, Progress, Stages};
use crate::report::Check;
use crate::staging::Outputs;
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// The name of the check of a road's own road.xodr in its build's report.
const OWN_CHECK: &str = "road.xodr: roadscan check";

/// The roads of the network `s` builds: Some(n) when its axis is a file of n > 1 roads and no
/// `--road` names one of them; None for a one-road build.
pub fn network_roads(s: &BuildConfig) -> Result<Option<usize>> {
    if let AxisSource::Osm { path, .. } | AxisSource::Passes { path, .. } = &s.axis {
        if s.s_range.is_some() {
            bail!("{}: --s-range needs a one-road axis, not a network", path.display());
        }
        return Ok(Some(AxisOf::of(s)?.odr.roads.len()));
    }
    let AxisSource::File { path, road: None } = &s.axis else { return Ok(None) };
    let odr = opendrive::read_file(path)?;
    let n = odr.roads.len();
    if n < 2 {
        return Ok(None);
    }
    if s.s_range.is_some() {
        bail!("{}: --s-range needs --road in a network of {n} roads", path.display());
    }
    Ok(Some(n))
}

/// What a network build made.
#[derive(Debug)]
pub struct NetworkBuilt {
    /// report.json as written.
    pub report_json: Vec<u8>,
    /// The network's checks and each road's, named by road.
    pub checks: Vec<Check>,
    /// Each road of the network in the file's order: its id and whether it was surveyed.
    pub roads: Vec<(String, bool)>,
}

impl NetworkBuilt {
    /// The checks that failed (the products are written all the same).
    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.pass)
    }
}

/// Builds the network `s` names into its output directory, staged and put in place whole.
pub fn build_network(s: &BuildConfig, progress: &dyn Progress) -> Result<NetworkBuilt> {
    let outputs = Outputs::new(s.inputs());
    let dir = outputs.dir(&s.out, "manifest.json")?;
    let built = network_into(s, &dir, progress)?;
    outputs.commit()?;
    Ok(built)
}

/// The directory under `roads/` of each road: its id with characters other than ASCII letters,
/// digits, `-` and `_` as `_`, `~N` (N its place from 1) when another road took the name.
pub fn road_dirs(odr: &opendrive::OpenDrive) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(odr.roads.len());
    for (i, road) in odr.roads.iter().enumerate() {
        let base: String =
            road.id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let base = if base.is_empty() { "_".to_string() } else { base };
        let name = if names.contains(&base) { format!("{base}~{}", i + 1) } else { base };
        names.push(name);
    }
    names
}

/// One road's outcome.
struct RoadOutcome {
    id: String,
    dir: String,
    /// The per-road report's JSON (None: not surveyed).
    report: Option<Value>,
    /// Its failed checks.
    failed: Vec<Check>,
    /// Why the road was kept as the network has it (None: surveyed).
    kept: Option<String>,
    /// Why the network's lanes were kept (None: the surveyed lanes, relinked).
    lanes_kept: Option<String>,
    /// Whether it is a connecting road (inside a junction).
    connecting: bool,
    seconds: f64,
}

fn network_into(s: &BuildConfig, dir: &Path, progress: &dyn Progress) -> Result<NetworkBuilt> {
    let t0 = Instant::now();
    let hashing = hash_inputs(s);
    let axis = AxisOf::of(s)?;
    // A network made from OSM ways is written as the build's axis.xodr.
    axis.write_into(dir)?;
    let n = axis.odr.roads.len();
    // The inputs opened once before any work (a bad file fails the build), the passes
    // registered once for every road.
    let mut st = Stages::new(0, progress);
    let mut inputs = axis.inputs(s, progress)?;
    let registration = register_passes(&mut st, &mut inputs, s, || axis.inputs(s, &crate::Silent), progress)?;
    drop(inputs);
    let hashes = hashing.join().map_err(|_| anyhow::anyhow!("internal: the hashing thread failed"))??;
    let dirs = road_dirs(&axis.odr);
    let mut outcomes: Vec<RoadOutcome> = axis
        .odr
        .roads
        .iter()
        .zip(&dirs)
        .map(|(road, d)| RoadOutcome {
            id: road.id.clone(),
            dir: format!("roads/{d}"),
            report: None,
            failed: Vec::new(),
            kept: None,
            lanes_kept: None,
            connecting: road.junction != "-1",
            seconds: 0.0,
        })
        .collect();
    let configs: Vec<BuildConfig> = axis.odr.roads.iter().map(|r| s.for_road(r)).collect();
    let mut point_reads = 0;
    for batch in read_batches(&axis.odr.roads) {
        // The batch's roads' builders, then the points once into all of them.
        let t = Instant::now();
        let mut inputs = axis.inputs(s, &crate::Silent)?;
        inputs.set_registration(registration.clone());
        let mut readers = Vec::with_capacity(batch.len());
        let mut reading = Vec::with_capacity(batch.len());
        for i in batch.clone() {
            let rdir = dir.join(&outcomes[i].dir);
            let road = &axis.odr.roads[i];
            let begun = std::fs::create_dir_all(&rdir)
                .with_context(|| format!("{}: cannot create", rdir.display()))
                .and_then(|()| RoadReading::new(&configs[i], &axis, road, &inputs, &rdir));
            match begun {
                Ok(r) => {
                    readers.push(r);
                    reading.push(i);
                }
                Err(e) => keep_unsurveyed(&mut outcomes[i], &rdir, e, progress)?,
            }
        }
        if readers.is_empty() {
            continue;
        }
        point_reads += 1;
        let mut st = Stages::new(ROAD_STAGES, progress);
        let (read_secs, failed) = read_roads(&mut st, inputs, &mut readers)?;
        // Each road's share of the batch's reading time.
        let share = t.elapsed().as_secs_f64() / reading.len().max(1) as f64;
        for ((reader, failed), i) in readers.into_iter().zip(failed).zip(reading) {
            let t = Instant::now();
            let road = &axis.odr.roads[i];
            progress.note(&Note::Info(format!("road {} ({} of {n})", road.id, i + 1)));
            let rdir = dir.join(&outcomes[i].dir);
            let built = match failed {
                Some(e) => Err(e),
                None => {
                    let known = hashes.clone();
                    let hashing = std::thread::spawn(move || Ok(known));
                    let job = RoadJob { axis: &axis, road, member: Member::Network, hashing, t0: Instant::now() };
                    let st = Stages::after(ROAD_STAGES, st.times.clone(), progress);
                    complete_road(&configs[i], job, reader, read_secs, registration.clone(), &rdir, st)
                }
            };
            let o = &mut outcomes[i];
            match built {
                // A road alone links to roads its file lacks: the network's check of the
                // joined road.xodr stands for each road's own.
                Ok(b) => {
                    o.failed = b.failed().filter(|c| !c.name.starts_with(OWN_CHECK)).cloned().collect();
                    o.report = Some(serde_json::from_slice(&b.report_json)?);
                }
                Err(e) => keep_unsurveyed(o, &rdir, e, progress)?,
            }
            o.seconds = share + t.elapsed().as_secs_f64();
        }
    }
    if outcomes.iter().all(|o| o.kept.is_some()) {
        let first = outcomes.first().and_then(|o| o.kept.clone()).unwrap_or_default();
        bail!("{}: no road of the network was surveyed (road {}: {first})", axis.path.display(), axis.odr.roads[0].id);
    }

    // The network: the file's roads in order, each surveyed one replaced by its build's road.
    let mut net = axis.odr.clone();
    for (road, o) in net.roads.iter_mut().zip(outcomes.iter_mut()) {
        if o.kept.is_some() {
            continue;
        }
        let file = dir.join(&o.dir).join("road.xodr");
        let built = opendrive::read_file(&file)?;
        let mut surveyed = built.roads.into_iter().next().with_context(|| format!("{}: no road", file.display()))?;
        for crg in &mut surveyed.surface.crgs {
            crg.file = format!("{}/{}", o.dir, crg.file);
        }
        // A connecting road's lanes follow the lanes of the roads it joins, and inside a
        // junction's paved area without marks the points give only the pavement's extent.
        let relinked = if o.connecting {
            Err(format!("a connecting road of junction {}: its lanes follow the roads it joins", road.junction))
        } else {
            relink_lanes(&mut surveyed, road)
        };
        if let Err(why) = relinked {
            surveyed.lanes = road.lanes.clone();
            o.lanes_kept = Some(why);
        }
        // The objects the survey found, named by road (each road's build numbers its own;
        // 1.8 wants ids unique in the file).
        for obj in &mut surveyed.objects.objects {
            if !road.objects.objects.iter().any(|o| o.id == obj.id) {
                obj.id = format!("road{}-{}", road.id, obj.id);
            }
        }
        // Its place in the network as the file gives it.
        surveyed.link = road.link.clone();
        surveyed.junction = road.junction.clone();
        *road = surveyed;
    }
    let text = opendrive::write(&net, &opendrive::WriteOptions::default())?;
    let back = opendrive::read(&text).context("internal: the network does not read back")?;
    voxel::write_atomic(&dir.join("road.xodr"), |w| w.write_all(text.as_bytes()))?;

    // The checks: the network's own (roadscan check on road.xodr), each road's kept or
    // relinked, each road's failed checks named by road.
    let mut checks = Vec::new();
    let diags = opendrive::validate::check(&back, &Default::default());
    let errors: Vec<String> =
        diags.iter().filter(|d| d.severity == opendrive::validate::Severity::Error).map(|d| d.to_string()).collect();
    checks.push(Check {
        name: "road.xodr: roadscan check (geometry, lanes, links, junctions)".into(),
        pass: errors.is_empty(),
        detail: if errors.is_empty() {
            format!("{} roads, {} junctions, no errors", back.roads.len(), back.junctions.len())
        } else {
            errors.join("; ")
        },
    });
    for o in &outcomes {
        if let Some(why) = &o.kept {
            checks.push(Check {
                name: format!("road {}: surveyed", o.id),
                pass: false,
                detail: format!("kept as the network has it: {why}"),
            });
        }
        if let Some(why) = &o.lanes_kept {
            checks.push(Check {
                name: format!("road {}: lanes from the points", o.id),
                // A connecting road's are kept by design.
                pass: o.connecting,
                detail: format!("the network's lanes kept: {why}"),
            });
        }
        for c in &o.failed {
            checks.push(Check { name: format!("road {}: {}", o.id, c.name), pass: false, detail: c.detail.clone() });
        }
    }

    let roads: Vec<Value> = outcomes
        .iter()
        .zip(&axis.odr.roads)
        .map(|(o, road)| {
            let r = o.report.as_ref();
            json!({
                "id": o.id,
                "dir": o.kept.is_none().then_some(&o.dir),
                "junction": road.junction,
                "length_m": road.length,
                "surveyed": o.kept.is_none(),
                "kept": o.kept,
                "lanes": match (&o.kept, &o.lanes_kept) {
                    (Some(_), _) => "the network's (not surveyed)".to_string(),
                    (None, Some(why)) => format!("the network's: {why}"),
                    (None, None) => "surveyed (the network's lane links)".to_string(),
                },
                "crg_coverage": r.map(|r| r["crg"]["coverage"].clone()),
                "elevation": r.map(|r| r["profile"]["elevation"].clone()),
                "superelevation": r.map(|r| r["profile"]["superelevation"].clone()),
                "points_near_road": r.map(|r| r["points"]["near_road"].clone()),
                "checks_failed": o.failed.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "seconds": o.seconds,
            })
        })
        .collect();
    let surveyed = outcomes.iter().filter(|o| o.kept.is_none()).count();
    let checks_json: Vec<Value> =
        checks.iter().map(|c| json!({"name": c.name, "pass": c.pass, "detail": c.detail})).collect();
    let report = json!({
        "roadscan": env!("CARGO_PKG_VERSION"),
        "network": {
            "file": "road.xodr",
            "axis": axis.label,
            "roads": n,
            "junctions": net.junctions.len(),
            "surveyed": surveyed,
            "note": "every road built as one build builds a road, into roads/ID/ (its own report there); the points are read once per batch of roads",
        },
        "roads": roads,
        "checks": checks_json,
        "registration": registration.as_ref().map(registration_summary),
        "performance": {"seconds": t0.elapsed().as_secs_f64(), "point_reads": point_reads},
    });
    let report_json = write_json(&dir.join("report.json"), &report)?;
    voxel::write_atomic(&dir.join("report.html"), |w| {
        w.write_all(html(&outcomes, &checks, &plan_view(&net, &outcomes)).as_bytes())
    })?;
    let times: Vec<(String, f64)> = outcomes.iter().map(|o| (format!("road {}", o.id), o.seconds)).collect();
    write_manifest(s, dir, &hashes, &times, t0.elapsed().as_secs_f64(), None)?;
    let roads = outcomes.iter().map(|o| (o.id.clone(), o.kept.is_none())).collect();
    Ok(NetworkBuilt { report_json, checks, roads })
}

/// Stages of a road's build (the reading shared by a batch of roads, then the road's own).
const ROAD_STAGES: usize = 6;

/// The most road, m, whose builders take the points of one read: the reading stage holds each
/// road's cross sections and ribbons (flat in the survey's size, linear in the road's length),
/// so a network is read once per this much road, not once per road.
const READ_TOGETHER: f64 = 250.0;

/// The network's roads in batches (index ranges, in file order) of at most [`READ_TOGETHER`]
/// metres (a longer road alone).
fn read_batches(roads: &[opendrive::Road]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut length = 0.0;
    for (i, r) in roads.iter().enumerate() {
        let l = if r.length.is_finite() { r.length.max(0.0) } else { READ_TOGETHER };
        match out.last_mut() {
            Some(b) if length + l <= READ_TOGETHER => {
                b.end = i + 1;
                length += l;
            }
            _ => {
                out.push(i..i + 1);
                length = l;
            }
        }
    }
    out
}

/// Road `o` not surveyed (`why`): kept as the network has it, its directory removed.
fn keep_unsurveyed(o: &mut RoadOutcome, rdir: &Path, why: anyhow::Error, progress: &dyn Progress) -> Result<()> {
    let why = format!("{why:#}");
    progress.note(&Note::Warning(format!("road {}: not surveyed, kept as the network has it: {why}", o.id)));
    if rdir.exists() {
        std::fs::remove_dir_all(rdir).with_context(|| format!("{}: cannot remove", rdir.display()))?;
    }
    o.kept = Some(why);
    Ok(())
}

/// The surveyed road's lanes given the network's lane links: the lanes of its first section
/// take the predecessors of the network road's first section, those of its last section the
/// successors of the network road's last, and lanes between its own sections link by id. An
/// error (the network's lanes are then kept) when the lane ids at either end differ from the
/// network road's, since the junctions' lane links name them.
fn relink_lanes(surveyed: &mut opendrive::Road, network: &opendrive::Road) -> std::result::Result<(), String> {
    use opendrive::{LaneLink, LaneSection};
    let ids = |sec: Option<&LaneSection>| -> Vec<i32> {
        let mut v: Vec<i32> = sec
            .map(|sec| {
                [&sec.left, &sec.right].into_iter().flatten().flat_map(|side| side.lanes.iter().map(|l| l.id)).collect()
            })
            .unwrap_or_default();
        v.sort_unstable();
        v
    };
    let (ours, theirs) = (&surveyed.lanes.lane_sections, &network.lanes.lane_sections);
    for (end, a, b) in [("start", ours.first(), theirs.first()), ("end", ours.last(), theirs.last())] {
        let (a, b) = (ids(a), ids(b));
        if a != b {
            return Err(format!("the survey found lanes {a:?} at the road's {end} where the network has {b:?}"));
        }
    }
    let link_of = |sec: Option<&LaneSection>, id: i32| -> Option<LaneLink> {
        sec.and_then(|sec| {
            [&sec.left, &sec.right].into_iter().flatten().flat_map(|side| side.lanes.iter()).find(|l| l.id == id)
        })
        .and_then(|l| l.link.clone())
    };
    let has = |sec: &LaneSection, id: i32| -> bool {
        [&sec.left, &sec.right].into_iter().flatten().any(|side| side.lanes.iter().any(|l| l.id == id))
    };
    let count = ours.len();
    let snapshot = ours.clone();
    for (k, sec) in surveyed.lanes.lane_sections.iter_mut().enumerate() {
        for side in [&mut sec.left, &mut sec.right].into_iter().flatten() {
            for lane in &mut side.lanes {
                let predecessors = if k == 0 {
                    link_of(theirs.first(), lane.id).map(|l| l.predecessors).unwrap_or_default()
                } else if has(&snapshot[k - 1], lane.id) {
                    vec![lane.id]
                } else {
                    Vec::new()
                };
                let successors = if k + 1 == count {
                    link_of(theirs.last(), lane.id).map(|l| l.successors).unwrap_or_default()
                } else if has(&snapshot[k + 1], lane.id) {
                    vec![lane.id]
                } else {
                    Vec::new()
                };
                lane.link = (!predecessors.is_empty() || !successors.is_empty()).then(|| LaneLink {
                    predecessors,
                    successors,
                    ..Default::default()
                });
            }
        }
    }
    Ok(())
}

/// The network's plan view as an inline SVG: each road's reference line every metre (file
/// frame, north up), green where surveyed, red where kept as the network has it, its id on
/// hover.
fn plan_view(net: &opendrive::OpenDrive, outcomes: &[RoadOutcome]) -> String {
    let lines: Vec<Vec<(f64, f64)>> = net
        .roads
        .iter()
        .map(|road| {
            let eval = opendrive::RoadEval::new(road);
            let n = (eval.length().ceil() as usize).clamp(1, 100_000);
            (0..=n)
                .map(|k| eval.pose(eval.length() * k as f64 / n as f64))
                .map(|p| (p.x, p.y))
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect()
        })
        .collect();
    let all = lines.iter().flatten();
    let (x0, x1) = all.clone().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (y0, y1) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    if !(x0 < x1 || y0 < y1) {
        return String::new();
    }
    let scale = 760.0 / (x1 - x0).max(y1 - y0).max(1e-9);
    let (w, h) = ((x1 - x0) * scale + 40.0, (y1 - y0) * scale + 40.0);
    let mut svg = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\">\n");
    for ((line, road), o) in lines.iter().zip(&net.roads).zip(outcomes) {
        let colour = if o.kept.is_none() { "#2a2" } else { "#d22" };
        let points: Vec<String> =
            line.iter().map(|p| format!("{:.1},{:.1}", 20.0 + (p.0 - x0) * scale, 20.0 + (y1 - p.1) * scale)).collect();
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"3\" points=\"{}\"><title>road {}</title></polyline>\n",
            points.join(" "),
            road.id.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;")
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

/// A small page: the plan view, each road with its state and a link to its own report, then
/// the checks.
fn html(outcomes: &[RoadOutcome], checks: &[Check], plan: &str) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let mut h = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>roadscan network build</title></head><body>\n<h1>Network build</h1>\n<p>road.xodr holds every road; each surveyed road's products are in its directory. Plan view: surveyed roads green, roads kept as the network has them red.</p>\n",
    );
    h.push_str(plan);
    h.push_str("<table border=\"1\"><tr><th>road</th><th>state</th><th>lanes</th><th>seconds</th></tr>\n");
    for o in outcomes {
        let state = match &o.kept {
            None => format!("<a href=\"{}/report.html\">surveyed</a>", esc(&o.dir)),
            Some(why) => format!("kept as the network has it: {}", esc(why)),
        };
        let lanes = o.lanes_kept.as_deref().map_or("surveyed".to_string(), |w| format!("the network's: {}", esc(w)));
        h.push_str(&format!(
            "<tr><td>{}</td><td>{state}</td><td>{lanes}</td><td>{:.1}</td></tr>\n",
            esc(&o.id),
            o.seconds
        ));
    }
    h.push_str("</table>\n<h2>Checks</h2>\n<ul>\n");
    for c in checks {
        let mark = if c.pass { "pass" } else { "FAIL" };
        h.push_str(&format!("<li>{mark}: {}: {}</li>\n", esc(&c.name), esc(&c.detail)));
    }
    h.push_str("</ul>\n</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{read_batches, relink_lanes, READ_TOGETHER};
    use opendrive::LaneLink;

    /// Roads go to one read in file order while their lengths fit; a longer road, or one of
    /// no finite length, reads alone; no road is left out or read twice.
    #[test]
    fn roads_are_read_in_batches_of_bounded_length() {
        let lengths = [100.0, 100.0, 40.0, 300.0, 20.0, f64::NAN, 10.0, 10.0];
        let roads: Vec<opendrive::Road> =
            lengths.iter().map(|&length| opendrive::Road { length, ..Default::default() }).collect();
        let b = read_batches(&roads);
        assert_eq!(b, vec![0..3, 3..4, 4..5, 5..6, 6..8]);
        for r in &b {
            let sum: f64 = roads[r.clone()].iter().map(|r| r.length).sum();
            assert!(r.len() == 1 || sum <= READ_TOGETHER, "{r:?}: {sum} m");
        }
        assert!(read_batches(&[]).is_empty());
    }

    /// The demo road (lanes 2, 1, -1, -2 in one section) as a network road whose lanes link to
    /// lanes -5 (before) and 7 (after), and as a survey that split it into two sections.
    fn roads() -> (opendrive::Road, opendrive::Road) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
        let mut network = opendrive::read_file(path).unwrap().roads.remove(0);
        let first = &mut network.lanes.lane_sections[0];
        for side in [&mut first.left, &mut first.right].into_iter().flatten() {
            for lane in &mut side.lanes {
                lane.link = Some(LaneLink { predecessors: vec![-5], successors: vec![7], ..Default::default() });
            }
        }
        let mut surveyed = network.clone();
        let mut second = surveyed.lanes.lane_sections[0].clone();
        second.s = 50.0;
        surveyed.lanes.lane_sections.push(second);
        for sec in &mut surveyed.lanes.lane_sections {
            for side in [&mut sec.left, &mut sec.right].into_iter().flatten() {
                side.lanes.iter_mut().for_each(|l| l.link = None);
            }
        }
        (network, surveyed)
    }

    fn link(road: &opendrive::Road, section: usize, id: i32) -> (Vec<i32>, Vec<i32>) {
        let l = road.lanes.lane_sections[section].lanes().find(|l| l.id == id).unwrap().link.clone().unwrap();
        (l.predecessors, l.successors)
    }

    #[test]
    fn surveyed_lanes_take_the_networks_links_at_the_ends_and_link_by_id_between() {
        let (network, mut surveyed) = roads();
        relink_lanes(&mut surveyed, &network).unwrap();
        for id in [2, 1, -1, -2] {
            assert_eq!(link(&surveyed, 0, id), (vec![-5], vec![id]), "lane {id}, first section");
            assert_eq!(link(&surveyed, 1, id), (vec![id], vec![7]), "lane {id}, last section");
        }
    }

    #[test]
    fn other_lane_ids_at_an_end_keep_the_networks_lanes() {
        let (network, mut surveyed) = roads();
        surveyed.lanes.lane_sections[1].right.as_mut().unwrap().lanes.retain(|l| l.id != -2);
        let e = relink_lanes(&mut surveyed, &network).unwrap_err();
        assert!(e.contains("[-1, 1, 2] at the road's end where the network has [-2, -1, 1, 2]"), "{e}");
    }
}
