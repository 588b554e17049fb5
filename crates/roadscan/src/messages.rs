//! What the product verbs say they did: the line each prints when it has written its files
//! (with the seconds the caller measured), the surveyed road's report, where a build's
//! products are, and a config file's error named where the file gives the option.

use crate::crg::{CrgConfig, CrgDone};
use crate::roadside::{RibbonsConfig, RibbonsDone, VoxelConfig, VoxelDone};
use crate::units::Planned;
use crate::xodr::{XodrConfig, XodrDone};
use serde_json::{json, Value};
use std::fmt;
use std::path::Path;

/// `first .. last` of some files, or the one file.
fn files(paths: &[std::path::PathBuf]) -> String {
    match paths {
        [one] => one.display().to_string(),
        many => {
            let name = |p: Option<&std::path::PathBuf>| p.map(|p| p.display().to_string()).unwrap_or_default();
            format!("{} tiles {} .. {}", many.len(), name(many.first()), name(many.last()))
        }
    }
}

impl CrgDone {
    /// What was written for `c` in `secs` seconds, as one line.
    pub fn wrote(&self, c: &CrgConfig, secs: f64) -> String {
        let (g, cell) = (&self.grid, c.cell);
        let pipeline::surface::PointCounts { offered, near, kept } = g.points;
        format!(
            "wrote {} ({} nodes across at {cell} m, u {:.2}..{:.2}, v {:.2}..{:.2}); coverage {:.1} % ({} nodes estimated, {} filled along track); points: {offered} read, {near} near the surface, {kept} used; {secs:.1} s (reading {:.1} s)",
            files(&self.written),
            g.crg.nv(),
            g.s_range.0,
            g.s_range.1,
            g.crg.road.v_right.unwrap_or(0.0),
            g.crg.road.v_left.unwrap_or(0.0),
            100.0 * g.coverage,
            g.estimated,
            g.filled,
            self.read_secs
        )
    }

    /// The tiles of an earlier run removed, as one line (none: `None`).
    pub fn removed(&self) -> Option<String> {
        let (first, last) = (self.stale.first()?, self.stale.last()?);
        Some(format!(
            "removed {} tiles of an earlier run past the last one written ({} .. {})",
            self.stale.len(),
            first.display(),
            last.display()
        ))
    }
}

impl VoxelDone {
    /// What was written for `c` in `secs` seconds, as one line.
    pub fn wrote(&self, c: &VoxelConfig, secs: f64) -> String {
        let (v, size) = (&self.summary, c.size);
        format!(
            "wrote {} ({} voxels of {size} m, {} vertices, {} faces, {:.1} MB){}; points: {} read, {} within {} m; {secs:.1} s (meshing and writing {:.1} s)",
            c.out.display(),
            v.voxels,
            v.obj.vertices,
            v.obj.faces,
            v.obj.bytes as f64 / 1e6,
            c.glb.as_ref().map_or(String::new(), |p| format!(" and {}", p.display())),
            self.points.offered,
            self.points.kept,
            c.road.buffer,
            v.secs
        )
    }
}

impl RibbonsDone {
    /// What was written for `c` in `secs` seconds, as one line.
    pub fn wrote(&self, c: &RibbonsConfig, secs: f64) -> String {
        let cell = c.cell;
        format!(
            "wrote {} ({} x {} pixels of {cell} m per side, filled left {:.1} %, right {:.1} %); points: {} read, {} within {} m; {secs:.1} s",
            c.out.display(),
            self.columns,
            self.rows,
            100.0 * self.filled.0,
            100.0 * self.filled.1,
            self.points.offered,
            self.points.kept,
            c.road.buffer,
        )
    }
}

/// What a virtual survey wrote into `out` in `secs` seconds, as one line.
pub fn synth_wrote(s: &sim::survey::Summary, out: &Path, secs: f64) -> String {
    format!(
        "wrote {} points of {} rays ({} profiles) to {} in {secs:.1} s",
        s.points,
        s.rays,
        s.profiles,
        out.display()
    )
}

impl XodrDone {
    /// The lane sections of the road written.
    fn sections(&self) -> &[opendrive::LaneSection] {
        self.odr.roads.first().map_or(&[], |r| &r.lanes.lane_sections)
    }

    /// What was written for `c` in `secs` seconds, as one line.
    pub fn wrote(&self, c: &XodrConfig, secs: f64) -> String {
        format!(
            "wrote {} ({} of {} points near the road, {} lane sections) in {secs:.1} s",
            c.out.display(),
            self.points.kept,
            self.points.offered,
            self.sections().len(),
        )
    }

    /// What the survey could not find, a line each (they make the exit code 1).
    pub fn findings(&self) -> impl Iterator<Item = String> + '_ {
        self.report.findings.iter().map(|f| format!("{}: {}", f.check, f.detail))
    }

    /// The survey report as JSON.
    pub fn json(&self) -> Value {
        let r = &self.report;
        let fit = |f: &Option<opendrive::fit::ProfileFit>| {
            f.as_ref().map(|f| json!({"records": f.records.len(), "max": f.max, "rms": f.rms}))
        };
        let curb = |c: &Option<pipeline::road::Curb>| c.as_ref().map(|c| json!({"t": c.t, "height": c.height}));
        json!({
            "rows": [r.rows.with_surface, r.rows.all],
            "elevation": fit(&r.elevation),
            "superelevation": fit(&r.superelevation),
            "curbs": {"left": curb(&r.curbs[0]), "right": curb(&r.curbs[1])},
            "markings": r.markings.iter().map(|m| json!({
                "t": m.t, "s": [m.s_range.0, m.s_range.1], "type": m.kind, "width": m.width,
            })).collect::<Vec<_>>(),
            "features": r.features.iter().map(|f| json!({
                "type": f.kind, "s": f.s, "t": f.t, "length": f.length, "width": f.width, "depth": f.depth,
            })).collect::<Vec<_>>(),
            "findings": r.findings.iter().map(|f| json!({"check": f.check, "detail": f.detail})).collect::<Vec<_>>(),
            "lane_sections": self.sections().len(),
        })
    }
}

/// The surveyed road's report: rows, profiles, curbs, markings, features and lane sections.
impl fmt::Display for XodrDone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.report;
        writeln!(f, "rows with a road surface: {} of {}", r.rows.with_surface, r.rows.all)?;
        if let Some(e) = &r.elevation {
            writeln!(
                f,
                "elevation: {} records, max {:.1} mm, rms {:.1} mm",
                e.records.len(),
                e.max * 1e3,
                e.rms * 1e3
            )?;
        }
        if let Some(x) = &r.superelevation {
            writeln!(f, "superelevation: {} records, max {:.4} rad", x.records.len(), x.max)?;
        }
        for (name, c) in ["left", "right"].iter().zip(&r.curbs) {
            match c {
                Some(c) => {
                    writeln!(f, "curb {name}: t {:+.3} m, height {:.3} m, {} rows", c.t, c.height, c.samples.len())?
                }
                None => writeln!(f, "curb {name}: none found")?,
            }
        }
        for m in &r.markings {
            let dg = m.dash_gap.map_or(String::new(), |(d, g)| format!(", dash {d:.1} m gap {g:.1} m"));
            let (t, (s0, s1), kind, width) = (m.t, m.s_range, &m.kind, m.width);
            writeln!(f, "marking: t {t:+.3} m, s {s0:.1}..{s1:.1}, {kind} {width:.2} m wide{dg}")?;
        }
        for x in &r.features {
            let depth = if x.depth >= 0.0 {
                format!("{:.0} mm deep", x.depth * 1e3)
            } else {
                format!("{:.0} mm proud", -x.depth * 1e3)
            };
            writeln!(f, "{}: s {:.2} t {:+.2}, {:.2} x {:.2} m, {depth}", x.kind, x.s, x.t, x.length, x.width)?;
        }
        for sec in self.sections() {
            let ids: Vec<String> = sec.lanes().filter(|l| l.id != 0).map(|l| l.id.to_string()).collect();
            writeln!(f, "lane section at s {:.1}: lanes {}", sec.s, ids.join(" "))?;
        }
        Ok(())
    }
}

/// Where a build's products are in `out`, a line each (with `survey`, also the demo's
/// survey).
pub fn products(out: &Path, survey: bool) -> Vec<String> {
    let o = out.display();
    let survey = survey.then_some(("survey/", "the survey itself and its truth"));
    [
        ("report.html", "the report: renders, plots, features, checks, speed"),
        ("road.xodr", "the surveyed road (OpenDRIVE 1.8; esmini, CarMaker, CARLA)"),
        ("crg/road_*.crg", "its 1 cm road surface (OpenCRG, attached to road.xodr)"),
        ("scene.obj, scene.glb", "the roadside voxels for a game engine"),
        ("ribbons/street_view.png", "the depth ribbons and the street view"),
        ("manifest.json", "inputs and outputs with sizes and SHA-256, parameters, timings"),
    ]
    .into_iter()
    .chain(survey)
    .map(|(path, what)| format!("  {o}/{path:<26} {what}"))
    .collect()
}

/// Where a network build's products are, a line each.
pub fn network_products(out: &Path) -> Vec<String> {
    let o = out.display();
    [
        ("report.html", "the network's report: each road's state and checks, links to theirs"),
        ("road.xodr", "the network: every road surveyed, links and junctions kept (OpenDRIVE 1.8)"),
        ("roads/ID/", "each surveyed road's build: road.xodr, crg/, report, voxels, ribbons"),
        ("manifest.json", "inputs and outputs with sizes and SHA-256, parameters, timings"),
    ]
    .into_iter()
    .map(|(path, what)| format!("  {o}/{path:<26} {what}"))
    .collect()
}

impl Planned {
    /// The plan's units and how to run them, as one line.
    pub fn summary(&self) -> String {
        let units = self.units;
        format!(
            "{} points, {} units in {}: points 0..{}, road {units}, surface {}..{}, finish {}; run each with `roadscan build --unit N` and the same options, a stage after the one before",
            self.points,
            2 * units + 2,
            self.work.display(),
            units.saturating_sub(1),
            units + 1,
            2 * units,
            2 * units + 1
        )
    }
}

/// The line (from 1) of the config text where `key` is given, if any.
fn config_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.trim_start().strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')))
        .map(|i| i + 1)
}

/// An error about an option (`--NAME ...`) that the config file `config` gave, not the
/// command line `args`, named where the file gives it (`FILE:LINE: NAME: error`).
pub fn blame_config(config: Option<&Path>, args: &[String], e: anyhow::Error) -> anyhow::Error {
    let Some(path) = config else { return e };
    let Ok(text) = std::fs::read_to_string(path) else { return e };
    let msg = e.to_string();
    let Some(name) = msg.strip_prefix("--").and_then(|m| m.split(|c: char| !(c.is_alphanumeric() || c == '-')).next())
    else {
        return e;
    };
    let on_command_line = args.iter().any(|arg| arg == &format!("--{name}") || arg.starts_with(&format!("--{name}=")));
    match config_line(&text, name) {
        Some(line) if !on_command_line => anyhow::anyhow!("{}:{line}: {name}: {e:#}", path.display()),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::blame_config;

    #[test]
    fn an_option_from_the_config_file_is_blamed_on_its_line_and_one_from_the_command_line_is_not() {
        let dir = std::env::temp_dir().join(format!("roadscan-blame-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("survey.toml");
        std::fs::write(&path, "input = [\"a.laz\"]\n  tile = -1\n").unwrap();
        let e = || anyhow::anyhow!("--tile must be from 1 to 10000 m, got -1");
        let blamed = blame_config(Some(&path), &["roadscan".into(), "build".into()], e()).to_string();
        assert_eq!(blamed, format!("{}:2: tile: --tile must be from 1 to 10000 m, got -1", path.display()));
        let given = ["roadscan".to_string(), "--tile=-1".into()];
        assert_eq!(blame_config(Some(&path), &given, e()).to_string(), e().to_string());
        let other = anyhow::anyhow!("--cell must be from 0.001 to 1 m, got 2");
        assert_eq!(blame_config(Some(&path), &[], other).to_string(), "--cell must be from 0.001 to 1 m, got 2");
        assert_eq!(blame_config(None, &[], e()).to_string(), e().to_string());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
