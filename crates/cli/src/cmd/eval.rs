//! `roadscan eval`: an OpenDRIVE file's reference lines, elevation and lane borders sampled
//! along s, as text (what the libOpenDRIVE oracle compares).

use super::read_xodr;
use crate::exit;
use anyhow::{bail, Result};
use opendrive::RoadEval;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Runs `eval`.
pub fn run(path: &Path, step: f64, roads: &[String]) -> Result<u8> {
    if !(step.is_finite() && step > 0.0) {
        bail!("--step must be a positive number of metres, got {step}");
    }
    let odr = read_xodr(path)?;
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
