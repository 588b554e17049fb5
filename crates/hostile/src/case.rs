//! A hostile case and the manifest that lists them (`DIR/manifest.tsv`, one case a line,
//! tab-separated: name, kind, file, expectation, place, partner axis, watched paths, then the
//! arguments of an argument case). `-` stands for an empty field.

use std::fmt;
use std::str::FromStr;

/// What a case's file is (it decides the verbs run on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// LAS or LAZ points.
    Las,
    /// OpenDRIVE.
    Xodr,
    /// OpenCRG (text or binary).
    Crg,
    /// CSV polyline (`axis --polyline`).
    Polyline,
    /// GeoJSON LineString (`axis --polyline x.geojson`).
    Geojson,
    /// Trajectory CSV (`axis --trajectory`, `build --trajectory`).
    Trajectory,
    /// OpenStreetMap XML (`axis --osm --way 1`).
    Osm,
    /// TOML build config (`build --config`, `plan --config`).
    Toml,
    /// A pcap capture (`replay`).
    Pcap,
    /// A beam table (`lidar --sensor FILE.toml`).
    Beams,
    /// A camera file (`camera --camera FILE.toml`).
    Camera,
    /// A sensor's trajectory CSV (`lidar --path FILE.csv`, `camera --path FILE.csv`).
    SensorPath,
    /// A file of a build's output directory given to `lidar --world` and `camera --world` (the
    /// case's directory `world/` holds the whole world, one file of it hostile).
    World,
    /// A scenario TOML file (`sim --scene demo FILE.toml`).
    Scenario,
    /// A saved simulation state (`sim --resume FILE.json`, with the partner scenario).
    SimState,
    /// Bad command-line arguments (the case gives the whole argument list).
    Args,
}

impl Kind {
    /// Every kind, in manifest order.
    pub const ALL: [Kind; 16] = [
        Kind::Las,
        Kind::Xodr,
        Kind::Crg,
        Kind::Polyline,
        Kind::Geojson,
        Kind::Trajectory,
        Kind::Osm,
        Kind::Toml,
        Kind::Pcap,
        Kind::Beams,
        Kind::Camera,
        Kind::SensorPath,
        Kind::World,
        Kind::Scenario,
        Kind::SimState,
        Kind::Args,
    ];

    /// The name in the manifest.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Las => "las",
            Kind::Xodr => "xodr",
            Kind::Crg => "crg",
            Kind::Polyline => "polyline",
            Kind::Geojson => "geojson",
            Kind::Trajectory => "trajectory",
            Kind::Osm => "osm",
            Kind::Toml => "toml",
            Kind::Pcap => "pcap",
            Kind::Beams => "beams",
            Kind::Camera => "camera",
            Kind::SensorPath => "sensorpath",
            Kind::World => "world",
            Kind::Scenario => "scenario",
            Kind::SimState => "simstate",
            Kind::Args => "args",
        }
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Kind, String> {
        Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| format!("unknown kind '{s}'"))
    }
}

/// The outcome a run must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Rejected: exit code 2, one stderr line naming the input and a place, nothing written.
    Fail,
    /// A finding: exit code 1 (`check` on content that reads but is wrong).
    Finding,
    /// Accepted: exit code 0.
    Ok,
    /// The input may be recoverable (a warning and the points that can be read) or not: exit
    /// 0, 1 or 2, and when 2 the same one clear line and nothing written.
    Any,
    /// The verb is not run on this case (e.g. a map without the demo's road 1 for `axis`).
    Skip,
}

impl Expect {
    /// Whether exit code `code` meets the expectation.
    pub fn allows(self, code: i32) -> bool {
        match self {
            Expect::Fail => code == 2,
            Expect::Finding => code == 1,
            Expect::Ok => code == 0,
            Expect::Any => (0..=2).contains(&code),
            Expect::Skip => true,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expect::Fail => "fail",
            Expect::Finding => "finding",
            Expect::Ok => "ok",
            Expect::Any => "any",
            Expect::Skip => "skip",
        }
    }
}

impl FromStr for Expect {
    type Err = String;
    fn from_str(s: &str) -> Result<Expect, String> {
        [Expect::Fail, Expect::Finding, Expect::Ok, Expect::Any, Expect::Skip]
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown expectation '{s}'"))
    }
}

/// What an error line must name besides being one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The input file (its name) and a place in it (line/column, byte, point, record, ...).
    File,
    /// The flag (or its value) of an argument case, e.g. `--s-range`.
    Flag(String),
}

/// One hostile input and what every verb must do with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Unique, `/`-separated (`las/warsaw/scale-x-nan`); also the case's directory under DIR/cases.
    pub name: String,
    pub kind: Kind,
    /// The hostile file, relative to DIR (none for most argument cases).
    pub file: Option<String>,
    /// The expectation for every verb not in `per_verb`.
    pub expect: Expect,
    /// Verb-specific expectations (e.g. `check` finds a superelevation of -0.91 rad: exit 1).
    pub per_verb: Vec<(String, Expect)>,
    pub place: Place,
    /// An axis that fits the file's points (relative to DIR), instead of the demo road.
    pub partner: Option<String>,
    /// Absolute paths outside the run's directory that must not appear (`--out /no/such/dir`).
    pub watch: Vec<String>,
    /// An argument case's verb and arguments, with the runner's placeholders ({F} the file,
    /// {O} the run's empty output directory, {AX} {LAS} {TRAJ} {CRG} the good partners).
    pub args: Vec<String>,
}

impl Case {
    /// A file case expecting `expect` from every verb.
    pub fn file(name: &str, kind: Kind, file: String, expect: Expect) -> Case {
        Case {
            name: name.to_string(),
            kind,
            file: Some(file),
            expect,
            per_verb: Vec::new(),
            place: Place::File,
            partner: None,
            watch: Vec::new(),
            args: Vec::new(),
        }
    }

    /// The expectation for `verb`.
    pub fn expect_for(&self, verb: &str) -> Expect {
        self.per_verb.iter().find(|(v, _)| v == verb).map_or(self.expect, |(_, e)| *e)
    }

    /// Parses a manifest line.
    pub fn parse(line: &str) -> Result<Case, String> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 7 {
            return Err(format!("manifest line with {} fields, expected at least 7: {line}", f.len()));
        }
        let opt = |s: &str| (s != "-").then(|| s.to_string());
        let mut parts = f[3].split(',');
        let expect: Expect = parts.next().unwrap_or("fail").parse()?;
        let per_verb = parts
            .map(|p| {
                let (v, e) = p.split_once('=').ok_or_else(|| format!("bad expectation '{p}'"))?;
                Ok((v.to_string(), e.parse()?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let place = match f[4].strip_prefix("flag:") {
            Some(flag) => Place::Flag(flag.to_string()),
            None if f[4] == "file" => Place::File,
            None => return Err(format!("bad place '{}'", f[4])),
        };
        Ok(Case {
            name: f[0].to_string(),
            kind: f[1].parse()?,
            file: opt(f[2]),
            expect,
            per_verb,
            place,
            partner: opt(f[5]),
            watch: opt(f[6]).map(|w| w.split(',').map(String::from).collect()).unwrap_or_default(),
            args: f[7..].iter().map(|s| s.to_string()).collect(),
        })
    }
}

impl fmt::Display for Case {
    /// The manifest line (without the newline).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut expect = self.expect.name().to_string();
        for (v, e) in &self.per_verb {
            expect.push_str(&format!(",{v}={}", e.name()));
        }
        let place = match &self.place {
            Place::File => "file".to_string(),
            Place::Flag(flag) => format!("flag:{flag}"),
        };
        let watch = if self.watch.is_empty() { "-".to_string() } else { self.watch.join(",") };
        write!(
            f,
            "{}\t{}\t{}\t{expect}\t{place}\t{}\t{watch}",
            self.name,
            self.kind.name(),
            self.file.as_deref().unwrap_or("-"),
            self.partner.as_deref().unwrap_or("-")
        )?;
        for a in &self.args {
            write!(f, "\t{a}")?;
        }
        Ok(())
    }
}

/// Reads `DIR/manifest.tsv`.
pub fn read_manifest(text: &str) -> Result<Vec<Case>, String> {
    text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).map(Case::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_survives_its_manifest_line() {
        let mut c = Case::file("xodr/demo/superelevation", Kind::Xodr, "cases/x/a.xodr".into(), Expect::Any);
        c.per_verb.push(("check".into(), Expect::Finding));
        c.partner = Some("partners/a.xodr".into());
        assert_eq!(Case::parse(&c.to_string()), Ok(c.clone()));
        assert_eq!(c.expect_for("check"), Expect::Finding);
        assert_eq!(c.expect_for("eval"), Expect::Any);
        let a = Case {
            name: "args/eval-step".into(),
            kind: Kind::Args,
            file: None,
            expect: Expect::Fail,
            per_verb: vec![],
            place: Place::Flag("--step".into()),
            partner: None,
            watch: vec!["/no".into()],
            args: vec!["eval".into(), "{AX}".into(), "--step".into(), "1e-6".into()],
        };
        assert_eq!(Case::parse(&a.to_string()), Ok(a));
        assert!(Case::parse("too\tfew").is_err());
    }
}
