//! `roadscan eval` and `roadscan crg-eval`: an OpenDRIVE file sampled along s as text (what
//! the libOpenDRIVE oracle compares), and an OpenCRG file evaluated as its C-API does.

use crate::files::read_xodr;
use anyhow::{bail, Context, Result};
use opencrg::{BorderMode, Surface};
use opendrive::RoadEval;
use std::fmt;
use std::path::{Path, PathBuf};

/// Most sample lines [`Samples`] prints: what a user would read or plot; a step of
/// micrometres on a long road is a mistake.
const MAX_LINES: f64 = 1e8;

/// An OpenDRIVE file's roads sampled every `step` metres: its [`Display`](fmt::Display) gives
/// `road s x y z hdg | laneOffset | lane_id:t_outer_border ...` per sample, after a header
/// line per road and per geometry record.
#[derive(Debug, Clone)]
pub struct Samples {
    path: PathBuf,
    odr: opendrive::OpenDrive,
    step: f64,
    roads: Vec<String>,
}

impl Samples {
    /// The roads `roads` (all when empty) of the OpenDRIVE file `path`, sampled every `step`
    /// metres; an error for a road that is not there or for too many samples.
    pub fn new(path: &Path, step: f64, roads: &[String]) -> Result<Samples> {
        if !(step.is_finite() && step > 0.0) {
            bail!("--step must be a positive number of metres, got {step}");
        }
        let odr = read_xodr(path)?;
        if let Some(id) = roads.iter().find(|id| odr.road(id).is_none()) {
            bail!("{}: no road with id {id}", path.display());
        }
        let s = Samples { path: path.to_path_buf(), odr, step, roads: roads.to_vec() };
        let lines: f64 = s.selected().map(|r| r.length / step).sum();
        if lines > MAX_LINES {
            bail!(
                "{}: --step {step} m would print {lines:.0} samples (at most {MAX_LINES:.0}); give a larger --step",
                path.display()
            );
        }
        Ok(s)
    }

    /// The roads sampled.
    fn selected(&self) -> impl Iterator<Item = &opendrive::Road> {
        self.odr.roads.iter().filter(|r| self.roads.is_empty() || self.roads.contains(&r.id))
    }
}

impl fmt::Display for Samples {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "# file {} roads {}", self.path.display(), self.selected().count())?;
        writeln!(f, "# road s x y z hdg | laneOffset | lane_id:t_outer_border ...")?;
        let step = self.step;
        for road in self.selected() {
            let ev = RoadEval::new(road);
            let geoms = &road.plan_view.geometries;
            writeln!(
                f,
                "ROAD {} length {:.6} junction {} geometries {} lanesections {}",
                road.id,
                road.length,
                road.junction,
                geoms.len(),
                road.lanes.lane_sections.len()
            )?;
            let mut prev: Option<&opendrive::Geometry> = None;
            for g in geoms {
                let (gap, dh) = prev.map_or((0.0, 0.0), |prev| {
                    let end = opendrive::eval::Curve::new(prev).pose(prev.length);
                    ((end.x - g.x).hypot(end.y - g.y), g.hdg - end.hdg)
                });
                prev = Some(g);
                writeln!(
                    f,
                    "GEOM {} s0 {:.6} x0 {:.6} y0 {:.6} hdg0 {:.9} len {:.6} prev_end_gap {gap:.3e} prev_end_dhdg {dh:.3e}",
                    road.id, g.s, g.x, g.y, g.hdg, g.length
                )?;
            }
            // At most MAX_LINES (checked in `new`).
            let n = (road.length / step).floor() as usize;
            let mut stations: Vec<f64> = (0..=n).map(|i| i as f64 * step).collect();
            if stations.last().is_none_or(|&s| road.length - s > 1e-9) {
                stations.push(road.length);
            }
            for s in stations {
                let p = ev.pose(s);
                let (z, offset) = (ev.elevation(s), ev.lane_offset(s));
                write!(f, "{} {s:.9} {:.9} {:.9} {z:.9} {:.9} | {offset:.9} |", road.id, p.x, p.y, p.hdg)?;
                for (id, t) in ev.lane_borders(s) {
                    write!(f, " {id}:{t:.9}")?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}

/// The OpenCRG file `path` prepared for evaluation (with its modifiers when `mods`), the
/// evaluation options `opts` (`KEY=VALUE`, the `$ROAD_CRG_OPTS` keywords) applied.
pub fn crg_surface(path: &Path, mods: bool, opts: &[String]) -> Result<Surface> {
    let mut surface = Surface::from_owned(opencrg::read_file(path)?, mods)?;
    for o in opts {
        let Some((k, v)) = o.split_once('=') else { bail!("--opt takes KEY=VALUE, got {o}") };
        let k = k.trim().to_ascii_lowercase();
        let num: f64 = v.trim().parse().with_context(|| format!("--opt {k}: '{v}' is not a number"))?;
        let mode =
            || BorderMode::from_code(num as i64).with_context(|| format!("--opt {k}={v}: border modes are 0..4"));
        let e = &mut surface.options;
        match k.as_str() {
            "border_mode_u" => e.border_mode_u = mode()?,
            "border_mode_v" => e.border_mode_v = mode()?,
            "border_offset_u" => e.border_offset_u = Some(num),
            "border_offset_v" => e.border_offset_v = Some(num),
            "border_smooth_ubeg" => e.smooth_u_begin = Some(num).filter(|&x| x != 0.0),
            "border_smooth_uend" => e.smooth_u_end = Some(num).filter(|&x| x != 0.0),
            "refline_continuation" => e.close_track = num != 0.0,
            "curv_mode" => e.curvature_lateral = num == 0.0,
            _ => bail!("--opt {k}: unknown option (border_mode_u/v, border_offset_u/v, border_smooth_ubeg/uend, refline_continuation, curv_mode)"),
        }
    }
    Ok(surface)
}

/// One line `uv U V` or `xy X Y` (line `number`, from 1) evaluated on `s`: `x y u v z`
/// (`nan` where there is no data, `err` where the border mode refuses); `None` for an empty
/// line or a comment (`#`).
pub fn crg_eval_line(s: &Surface, number: usize, line: &str) -> Result<Option<String>> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    let fmt = |x: f64| if x.is_nan() { "nan".to_string() } else { format!("{x:.12e}") };
    let mut it = t.split_whitespace();
    let kind = it.next().unwrap_or_default();
    let mut num = || -> Result<f64> {
        it.next()
            .and_then(|x| x.parse().ok())
            .with_context(|| format!("stdin line {number}: expected 'uv U V' or 'xy X Y'"))
    };
    let (a, b) = (num()?, num()?);
    let (x, y, u, v) = match kind {
        "uv" => {
            let (x, y) = s.uv_to_xy(a, b);
            (x, y, a, b)
        }
        "xy" => {
            let (u, v) = s.xy_to_uv(a, b);
            (a, b, u, v)
        }
        _ => bail!("stdin line {number}: expected 'uv U V' or 'xy X Y', got '{t}'"),
    };
    let z = s.uv_to_z(u, v).map_or("err".to_string(), fmt);
    Ok(Some(format!("{} {} {} {} {z}", fmt(x), fmt(y), fmt(u), fmt(v))))
}

#[cfg(test)]
mod tests {
    use super::{crg_eval_line, crg_surface, Samples};
    use std::path::{Path, PathBuf};

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data").join(name)
    }

    #[test]
    fn samples_start_at_zero_end_at_the_road_end_and_refuse_bad_steps_and_roads() {
        let path = data("golden/demo.xodr");
        let text = Samples::new(&path, 7.0, &[]).unwrap().to_string();
        let odr = crate::files::read_xodr(&path).unwrap();
        let road = &odr.roads[0];
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with(&format!("{} ", road.id))).collect();
        assert_eq!(rows.len(), (road.length / 7.0).floor() as usize + 1 + usize::from(road.length % 7.0 > 1e-9));
        assert!(rows[0].split(' ').nth(1).is_some_and(|s| s.parse::<f64>().unwrap() == 0.0));
        let last: f64 = rows[rows.len() - 1].split(' ').nth(1).unwrap().parse().unwrap();
        assert!((last - road.length).abs() < 1e-8, "{last} vs {}", road.length);
        for step in [0.0, -1.0, f64::NAN, 1e-9] {
            assert!(Samples::new(&path, step, &[]).is_err(), "step {step}");
        }
        let e = Samples::new(&path, 1.0, &["no-such-road".into()]).unwrap_err().to_string();
        assert!(e.ends_with("no road with id no-such-road"), "{e}");
    }

    #[test]
    fn crg_eval_lines_are_parsed_or_refused_with_their_line_number() {
        let s = crg_surface(&data("golden/grid7x5.krbi.crg"), false, &[]).unwrap();
        assert_eq!(crg_eval_line(&s, 1, "  # comment").unwrap(), None);
        assert_eq!(crg_eval_line(&s, 2, "").unwrap(), None);
        let (u0, _) = s.u_range();
        let line = crg_eval_line(&s, 3, &format!("uv {u0} 0")).unwrap().unwrap();
        assert_eq!(line.split(' ').count(), 5, "{line}");
        for bad in ["uv 1", "uv a b", "zz 1 2", "xy"] {
            let e = crg_eval_line(&s, 4, bad).unwrap_err().to_string();
            assert!(e.starts_with("stdin line 4: expected 'uv U V' or 'xy X Y'"), "{bad}: {e}");
        }
        for bad in ["border_mode_u", "border_mode_u=9", "nope=1", "border_offset_u=x"] {
            assert!(crg_surface(&data("golden/grid7x5.krbi.crg"), false, &[bad.into()]).is_err(), "{bad}");
        }
    }
}
