//! The OpenDRIVE verbs.

use crate::exit;
use anyhow::{bail, Context, Result};
use opendrive::validate::{self, Severity};
use opendrive::{GeometryKind, RoadEval};
use std::io::{BufWriter, Write};
use std::path::Path;

fn read(path: &Path) -> Result<opendrive::OpenDrive> {
    if crate::is_las(path) {
        bail!(
            "{}: a LAS/LAZ file, where an OpenDRIVE (.xodr) or OpenCRG (.crg) file is read; `roadscan info` summarises point clouds",
            path.display()
        );
    }
    Ok(opendrive::read_file(path)?)
}

pub fn check(path: &Path, json: bool) -> Result<u8> {
    let odr = read(path)?;
    let diags = validate::check(&odr, &validate::CheckOptions::default());
    let mut kinds = [0usize; 5];
    for g in odr.roads.iter().flat_map(|r| &r.plan_view.geometries) {
        kinds[match g.kind {
            GeometryKind::Line => 0,
            GeometryKind::Arc { .. } => 1,
            GeometryKind::Spiral { .. } => 2,
            GeometryKind::Poly3 { .. } => 3,
            GeometryKind::ParamPoly3 { .. } => 4,
        }] += 1;
    }
    let length: f64 = odr.roads.iter().map(|r| r.length).sum();
    let sections: usize = odr.roads.iter().map(|r| r.lanes.lane_sections.len()).sum();
    let objects: usize = odr.roads.iter().map(|r| r.objects.objects.len()).sum();
    let signals: usize = odr.roads.iter().map(|r| r.signals.signals.len()).sum();
    let crgs: usize = odr.roads.iter().map(|r| r.surface.crgs.len()).sum();
    let n_err = diags.iter().filter(|d| d.severity == Severity::Error).count();
    let n_warn = diags.iter().filter(|d| d.severity == Severity::Warning).count();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let h = &odr.header;
    if json {
        writeln!(out, "{{")?;
        writeln!(out, "  \"file\": {},", roadscan::json_str(&path.display().to_string()))?;
        writeln!(out, "  \"revision\": \"{}.{}\",", h.rev_major, h.rev_minor)?;
        writeln!(
            out,
            "  \"roads\": {}, \"junctions\": {}, \"length_m\": {length},",
            odr.roads.len(),
            odr.junctions.len()
        )?;
        writeln!(
            out,
            "  \"geometry\": {{\"line\": {}, \"arc\": {}, \"spiral\": {}, \"poly3\": {}, \"paramPoly3\": {}}},",
            kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]
        )?;
        writeln!(
            out,
            "  \"lane_sections\": {sections}, \"objects\": {objects}, \"signals\": {signals}, \"road_crgs\": {crgs},"
        )?;
        writeln!(out, "  \"errors\": {n_err}, \"warnings\": {n_warn},")?;
        writeln!(out, "  \"diagnostics\": [")?;
        for (i, d) in diags.iter().enumerate() {
            let comma = if i + 1 < diags.len() { "," } else { "" };
            writeln!(
                out,
                "    {{\"severity\": \"{}\", \"road\": {}, \"s\": {}, \"message\": {}}}{comma}",
                d.severity,
                d.road.as_ref().map_or("null".into(), |r| roadscan::json_str(r)),
                d.s.map_or("null".into(), |s| s.to_string()),
                roadscan::json_str(&d.message)
            )?;
        }
        writeln!(out, "  ]\n}}")?;
    } else {
        writeln!(out, "{}: OpenDRIVE {}.{}", path.display(), h.rev_major, h.rev_minor)?;
        if let Some(g) = &h.geo_reference {
            writeln!(out, "  geoReference: {}", g.trim())?;
        }
        if let Some(o) = &h.offset {
            writeln!(out, "  offset: x={} y={} z={} hdg={}", o.x, o.y, o.z, o.hdg)?;
        }
        writeln!(
            out,
            "  {} roads, {:.3} km of reference line, {} junctions",
            odr.roads.len(),
            length / 1000.0,
            odr.junctions.len()
        )?;
        writeln!(
            out,
            "  geometry records: {} line, {} arc, {} spiral, {} poly3, {} paramPoly3",
            kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]
        )?;
        writeln!(out, "  {sections} lane sections, {objects} objects, {signals} signals, {crgs} road CRGs")?;
        for d in &diags {
            writeln!(out, "  {d}")?;
        }
        writeln!(out, "  {n_err} errors, {n_warn} warnings")?;
    }
    out.flush()?;
    Ok(if n_err > 0 { exit::FINDINGS } else { exit::OK })
}

pub fn eval(path: &Path, step: f64, roads: &[String]) -> Result<u8> {
    if !(step.is_finite() && step > 0.0) {
        bail!("--step must be a positive number of metres, got {step}");
    }
    let odr = read(path)?;
    for id in roads {
        if odr.road(id).is_none() {
            bail!("{}: no road with id {id}", path.display());
        }
    }
    let selected: Vec<&opendrive::Road> =
        odr.roads.iter().filter(|r| roads.is_empty() || roads.contains(&r.id)).collect();
    // What a user would read or plot; a step of micrometres on a long road is a mistake.
    const MAX_LINES: f64 = 1e8;
    let lines: f64 = selected.iter().map(|r| r.length / step).sum();
    if lines > MAX_LINES {
        bail!(
            "{}: --step {step} m would print {lines:.0} samples (at most {MAX_LINES:.0}); give a larger --step",
            path.display()
        );
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    writeln!(out, "# file {} roads {}", path.display(), selected.len())?;
    writeln!(out, "# road s x y z hdg | laneOffset | lane_id:t_outer_border ...")?;
    for road in selected {
        let ev = RoadEval::new(road);
        let geoms = &road.plan_view.geometries;
        writeln!(
            out,
            "ROAD {} length {:.6} junction {} geometries {} lanesections {}",
            road.id,
            road.length,
            road.junction,
            geoms.len(),
            road.lanes.lane_sections.len()
        )?;
        for (i, g) in geoms.iter().enumerate() {
            let (gap, dh) = if i == 0 {
                (0.0, 0.0)
            } else {
                let prev = &geoms[i - 1];
                let end = opendrive::eval::Curve::new(prev).pose(prev.length);
                ((end.x - g.x).hypot(end.y - g.y), g.hdg - end.hdg)
            };
            writeln!(
                out,
                "GEOM {} s0 {:.6} x0 {:.6} y0 {:.6} hdg0 {:.9} len {:.6} prev_end_gap {gap:.3e} prev_end_dhdg {dh:.3e}",
                road.id, g.s, g.x, g.y, g.hdg, g.length
            )?;
        }
        let n_f = (road.length / step).floor();
        if n_f > 1e8 {
            bail!("road {}: {} samples at --step {step} m; use a larger step", road.id, n_f);
        }
        let n = n_f as usize;
        let mut stations: Vec<f64> = (0..=n).map(|i| i as f64 * step).collect();
        if stations.last().is_none_or(|&s| road.length - s > 1e-9) {
            stations.push(road.length);
        }
        for s in stations {
            let p = ev.pose(s);
            write!(
                out,
                "{} {s:.9} {:.9} {:.9} {:.9} {:.9} | {:.9} |",
                road.id,
                p.x,
                p.y,
                ev.elevation(s),
                p.hdg,
                ev.lane_offset(s)
            )?;
            for (id, t) in ev.lane_borders(s) {
                write!(out, " {id}:{t:.9}")?;
            }
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}

pub fn convert(input: &Path, output: &Path, version: &str, quiet: bool) -> Result<u8> {
    let Some(version) = opendrive::Version::parse(version) else {
        bail!("--version must be 1.6, 1.7 or 1.8, got {version}");
    };
    let outputs = roadscan::staging::Outputs::new([input]);
    let staged = outputs.file(roadscan::staging::with_extension("the output", output, &["xodr", "xml"])?)?;
    let mut odr = read(input)?;
    let notes = opendrive::convert::upgrade(&mut odr, version);
    opendrive::write_file(&odr, &staged, &opendrive::WriteOptions { version })
        .with_context(|| format!("writing {}", output.display()))?;
    outputs.commit()?;
    if !quiet {
        const SHOWN: usize = 20;
        for n in notes.iter().take(SHOWN) {
            eprintln!("roadscan: note: {n}");
        }
        if notes.len() > SHOWN {
            eprintln!("roadscan: note: ... and {} more changes", notes.len() - SHOWN);
        }
        eprintln!(
            "roadscan: wrote {} (OpenDRIVE 1.{}, {} roads, {} changes for the target revision)",
            output.display(),
            version.minor(),
            odr.roads.len(),
            notes.len()
        );
    }
    Ok(exit::OK)
}
