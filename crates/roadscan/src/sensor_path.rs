//! Where a virtual sensor drives (`lidar`, `camera`): the centre of a lane (`lane:ID`) or a
//! trajectory CSV (`--path FILE.csv`).
//!
//! A trajectory CSV has a header naming the columns `time`, `x`, `y`, `z`, `roll`, `pitch` and
//! `heading` (any order, case-insensitive; other columns are ignored, but for `pass`: with one,
//! only the rows of the first row's pass are read). That is both a plain
//! `time,x,y,z,roll,pitch,heading` file and the virtual survey's `trajectory.csv`
//! (`time,x,y,z,roll,pitch,heading,pass`, see [`sim::survey`]). Units and frames:
//!
//! - `time`: seconds, strictly increasing; the drive's time 0 is the first row's.
//! - `x y z`: metres in the **map frame** (the survey's, the LAS points'): the road file's
//!   header `<offset>` is taken off to give the world's file frame (a road without `<offset>`
//!   has the two frames equal). The rows are the vehicle body's origin; the sensor's mount
//!   (`--height`, a camera file's `[mount]`) is added to it, so a survey's rows (the scanner
//!   centre) want `--height 0`.
//! - `roll pitch heading`: radians; heading counter-clockwise from the map's x (east), pitch
//!   nose up positive, roll right side down positive (the survey's superelevation sign).
//!
//! Between rows positions are interpolated linearly and each angle along its shortest arc.

use anyhow::{anyhow, bail, Context, Result};
use opendrive::HeaderOffset;
use std::path::Path;
use world::{LanePath, Pose, Trajectory, V3};

/// The most bytes a trajectory CSV may have (a 100 Hz drive of a day is ~600 MB; well past
/// any sensor run).
const MOST_BYTES: u64 = 1 << 30;

/// A trajectory read from a CSV file: poses at times, interpolated between.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTrajectory {
    /// Times from the first row, s.
    times: Vec<f64>,
    /// Positions in the world's file frame, m.
    positions: Vec<V3>,
    /// Roll, pitch, heading (file frame), rad.
    angles: Vec<[f64; 3]>,
    /// The first row's time in the file, s.
    pub first_time: f64,
}

impl CsvTrajectory {
    /// Reads `path` (see the module docs), taking `offset` (the world's road file header
    /// `<offset>`) off the map coordinates.
    pub fn read(path: &Path, offset: HeaderOffset) -> Result<CsvTrajectory> {
        let file = path.display().to_string();
        let len = std::fs::metadata(path).with_context(|| format!("{file}: cannot read"))?.len();
        if len > MOST_BYTES {
            bail!("{file}: {len} bytes is more than a trajectory CSV may have ({MOST_BYTES})");
        }
        let bytes = std::fs::read(path).with_context(|| format!("{file}: cannot read"))?;
        let text =
            std::str::from_utf8(&bytes).map_err(|e| anyhow!("{file}: byte {}: not UTF-8 text", e.valid_up_to()))?;
        Self::parse(&file, text, offset)
    }

    /// Parses `text` (named `file` in errors).
    pub fn parse(file: &str, text: &str, offset: HeaderOffset) -> Result<CsvTrajectory> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let (hn, header) = lines
            .next()
            .ok_or_else(|| anyhow!("{file}:1: empty: expected a header naming time,x,y,z,roll,pitch,heading"))?;
        let names: Vec<String> = header.split(',').take(257).map(|f| f.trim().to_ascii_lowercase()).collect();
        if names.len() > 256 {
            bail!("{file}:{hn}: a header of more than 256 columns");
        }
        const NEED: [&str; 7] = ["time", "x", "y", "z", "roll", "pitch", "heading"];
        let mut cols = [0usize; 7];
        for (k, need) in NEED.iter().enumerate() {
            cols[k] = names.iter().position(|n| n == need).ok_or_else(|| {
                anyhow!(
                    "{file}:{hn}: the header names no column {need} (expected time,x,y,z,roll,pitch,heading; found {})",
                    names.join(",")
                )
            })?;
        }
        let pass_col = names.iter().position(|n| n == "pass");
        let place = offset.placement();
        let mut pass: Option<String> = None;
        let (mut times, mut positions, mut angles) = (Vec::new(), Vec::new(), Vec::new());
        let mut first_time = f64::NAN;
        let mut last_line = hn;
        for (n, line) in lines {
            last_line = n;
            let f: Vec<&str> = line.split(',').take(names.len() + 1).map(str::trim).collect();
            if f.len() != names.len() {
                let found =
                    if f.len() > names.len() { format!("more than {}", names.len()) } else { f.len().to_string() };
                bail!("{file}:{n}: {found} fields, the header names {}", names.len());
            }
            if let Some(c) = pass_col {
                if f[c] != pass.get_or_insert_with(|| f[c].to_string()).as_str() {
                    continue;
                }
            }
            let mut v = [0.0; 7];
            for (k, &c) in cols.iter().enumerate() {
                let x: f64 =
                    f[c].parse().map_err(|_| anyhow!("{file}:{n}: {}: {:?} is not a number", NEED[k], f[c]))?;
                if !x.is_finite() {
                    bail!("{file}:{n}: {}: {x} is not a finite number", NEED[k]);
                }
                v[k] = x;
            }
            let [time, x, y, z, roll, pitch, heading] = v;
            if roll.abs() > 10.0 || pitch.abs() > 10.0 || heading.abs() > 1e4 {
                bail!("{file}:{n}: roll {roll}, pitch {pitch}, heading {heading}: angles are radians (|roll|, |pitch| <= 10)");
            }
            if pitch.abs() >= std::f64::consts::FRAC_PI_2 {
                bail!("{file}:{n}: pitch {pitch} rad: the vehicle stands on its nose (|pitch| < pi/2)");
            }
            if times.is_empty() {
                first_time = time;
            }
            let t = time - first_time;
            if let Some(&prev) = times.last() {
                if t <= prev {
                    bail!(
                        "{file}:{n}: time {time} does not increase (the row before has {}); times must be strictly increasing",
                        prev + first_time
                    );
                }
            }
            times.push(t);
            positions.push(place.to_file([x, y, z]));
            angles.push([roll, pitch, heading - offset.hdg]);
        }
        if times.len() < 2 {
            let which = pass.map_or(String::new(), |p| format!(" of pass {p}"));
            bail!(
                "{file}:{last_line}: the file ends after {} row(s){which}; a trajectory needs at least 2",
                times.len()
            );
        }
        Ok(CsvTrajectory { times, positions, angles, first_time })
    }

    /// The trajectory read in one file frame moved to another: `offset` (a road file's header
    /// `<offset>`) taken off the positions and headings (a trajectory read with a zero offset
    /// is in the map frame).
    pub fn placed(mut self, offset: HeaderOffset) -> CsvTrajectory {
        let place = offset.placement();
        for p in &mut self.positions {
            *p = place.to_file(*p);
        }
        for a in &mut self.angles {
            a[2] -= offset.hdg;
        }
        self
    }

    /// Seconds from the first row to the last.
    pub fn length(&self) -> f64 {
        self.times.last().copied().unwrap_or(0.0)
    }

    /// Speed at `t` over the row interval there, m/s.
    pub fn speed(&self, t: f64) -> f64 {
        let i = self.interval(t);
        let (a, b) = (self.positions[i], self.positions[i + 1]);
        let d = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2) + (b[2] - a[2]).powi(2)).sqrt();
        d / (self.times[i + 1] - self.times[i])
    }

    /// The row interval holding `t` (clamped to the first and the last).
    fn interval(&self, t: f64) -> usize {
        let n = self.times.len();
        self.times.partition_point(|&x| x <= t).clamp(1, n - 1) - 1
    }
}

/// `b - a` wrapped into (-π, π].
fn arc(a: f64, b: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    let d = (b - a).rem_euclid(TAU);
    if d > PI {
        d - TAU
    } else {
        d
    }
}

impl Trajectory for CsvTrajectory {
    fn pose(&self, t: f64) -> Pose {
        let i = self.interval(t);
        let (ta, tb) = (self.times[i], self.times[i + 1]);
        let w = ((t - ta) / (tb - ta)).clamp(0.0, 1.0);
        let (pa, pb) = (self.positions[i], self.positions[i + 1]);
        let p = [0, 1, 2].map(|k| pa[k] + w * (pb[k] - pa[k]));
        let (aa, ab) = (self.angles[i], self.angles[i + 1]);
        let [roll, pitch, heading] = [0, 1, 2].map(|k| aa[k] + w * arc(aa[k], ab[k]));
        Pose::from_ypr(p, heading, pitch, roll)
    }
    fn span(&self) -> (f64, f64) {
        (0.0, self.length())
    }
}

/// A path moved by a constant offset (from one file frame to another).
#[derive(Debug)]
pub struct Shifted<T> {
    /// The path.
    pub inner: T,
    /// The offset, m.
    pub by: V3,
}

impl<T: Trajectory> Trajectory for Shifted<T> {
    fn pose(&self, t: f64) -> Pose {
        let p = self.inner.pose(t);
        Pose { position: [p.position[0] + self.by[0], p.position[1] + self.by[1], p.position[2] + self.by[2]], ..p }
    }
    fn span(&self) -> (f64, f64) {
        self.inner.span()
    }
}

/// A sensor's path: a lane's centre or a trajectory file.
#[derive(Debug)]
pub enum SensorPath<'a> {
    /// `lane:ID` of a road (shifted from its file's frame to the world's).
    Lane(Shifted<LanePath<'a>>),
    /// `FILE.csv`.
    Csv(CsvTrajectory),
}

impl SensorPath<'_> {
    /// The station along the lane at `t` (None for a trajectory file).
    pub fn station(&self, t: f64) -> Option<f64> {
        match self {
            SensorPath::Lane(l) => Some(l.inner.s_at(t)),
            SensorPath::Csv(_) => None,
        }
    }
    /// Speed at `t`, m/s (`lane_speed` for a lane).
    pub fn speed(&self, t: f64, lane_speed: f64) -> f64 {
        match self {
            SensorPath::Lane(_) => lane_speed,
            SensorPath::Csv(c) => c.speed(t),
        }
    }
}

impl Trajectory for SensorPath<'_> {
    fn pose(&self, t: f64) -> Pose {
        match self {
            SensorPath::Lane(l) => l.pose(t),
            SensorPath::Csv(c) => c.pose(t),
        }
    }
    fn span(&self) -> (f64, f64) {
        match self {
            SensorPath::Lane(l) => l.span(),
            SensorPath::Csv(c) => c.span(),
        }
    }
}

/// What a `--path` names.
#[derive(Debug, Clone, PartialEq)]
pub enum PathSpec {
    /// `lane:ID`.
    Lane(i32),
    /// A trajectory CSV and its rows in the map frame (see [`CsvTrajectory::placed`]).
    Csv(std::path::PathBuf, CsvTrajectory),
}

/// Parses a `--path`: `lane:ID`, or a file ending in `.csv` (read here, in the map frame, so
/// that a bad file fails before a world is loaded).
pub fn path_spec(path: &str) -> Result<PathSpec> {
    if let Some(id) = path.strip_prefix("lane:") {
        return id.parse().map(PathSpec::Lane).map_err(|_| anyhow!("--path {path}: lane id {id} is not an integer"));
    }
    if path.to_ascii_lowercase().ends_with(".csv") {
        let file = std::path::PathBuf::from(path);
        let csv = CsvTrajectory::read(&file, HeaderOffset::default())?;
        return Ok(PathSpec::Csv(file, csv));
    }
    bail!(
        "--path {path}: expected lane:ID (e.g. lane:-1, the first lane right of the reference line) or a trajectory FILE.csv"
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CsvTrajectory, String> {
        CsvTrajectory::parse("t.csv", text, HeaderOffset::default())
            .map(|t| t.placed(HeaderOffset { x: 100.0, y: 200.0, z: 10.0, hdg: 0.0 }))
            .map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn poses_are_interpolated_linearly_and_by_the_shortest_arc() {
        let t = parse(
            "time,x,y,z,roll,pitch,heading\n5,100,200,10,0,0,6.2\n6,110,200,12,0.02,0.1,0.1\n7,120,210,12,0,0,1.0\n",
        )
        .unwrap();
        assert_eq!(t.span(), (0.0, 2.0));
        assert_eq!(t.first_time, 5.0);
        let p = t.pose(0.5);
        assert!((p.position[0] - 5.0).abs() < 1e-12 && (p.position[2] - 1.0).abs() < 1e-12, "{:?}", p.position);
        // 6.2 to 0.1 rad goes forward across 2π: midway is 6.2 + 0.0916.
        let want = (6.2 + 0.5 * (0.1 + std::f64::consts::TAU - 6.2)).rem_euclid(std::f64::consts::TAU);
        assert!((p.yaw().rem_euclid(std::f64::consts::TAU) - want).abs() < 1e-9, "{} {want}", p.yaw());
        assert!((p.axes[0][2] - 0.05f64.sin()).abs() < 1e-12);
        assert!((t.speed(0.5) - (100.0f64 + 4.0).sqrt()).abs() < 1e-12);
        // Clamped at the ends.
        assert_eq!(t.pose(-1.0).position, [0.0, 0.0, 0.0]);
        assert_eq!(t.pose(9.0).position, [20.0, 10.0, 2.0]);
    }

    #[test]
    fn a_survey_trajectory_reads_its_first_pass() {
        let t = parse(
            "time,x,y,z,roll,pitch,heading,pass\n1e9,100,200,10,0,0,0,1\n1e9+1,1,1,1,0,0,0,2\n\
             1000000001,101,200,10,0,0,0,1\n",
        );
        // A row of pass 2 is skipped whatever it holds.
        let t = t.unwrap();
        assert_eq!(t.span(), (0.0, 1.0));
        assert_eq!(t.pose(1.0).position, [1.0, 0.0, 0.0]);
    }

    #[test]
    fn bad_files_name_the_file_and_the_line() {
        let h = "time,x,y,z,roll,pitch,heading\n";
        let cases = [
            (String::new(), "t.csv:1: empty"),
            ("time,x,y,z,heading\n0,1,2,3,4\n".into(), "t.csv:1: the header names no column roll"),
            (format!("{h}0,1,2,3,0,0,0\n"), "t.csv:2: the file ends after 1 row(s)"),
            (format!("{h}0,1,2,3,0,0,0\n0,1,2,3,0,0,0\n"), "t.csv:3: time 0 does not increase"),
            (format!("{h}0,1,2,3,0,0,0\n1,NaN,2,3,0,0,0\n"), "t.csv:3: x: NaN is not a finite"),
            (format!("{h}0,1,2,3,0,0,0\n1,1,2,3,0,0\n"), "t.csv:3: 6 fields"),
            (format!("{h}0,1,2,3,0,0,0\n1,1,two,3,0,0,0\n"), "t.csv:3: y: \"two\" is not a number"),
            (format!("{h}0,1,2,3,0,0,0\n1,1,2,3,0,1.6,0\n"), "t.csv:3: pitch 1.6"),
            (format!("{h}0,1,2,3,0,0,0\n1,1,2,3,0,0,1e5\n"), "t.csv:3: roll 0, pitch 0, heading 100000"),
        ];
        for (text, want) in cases {
            let e = parse(&text).expect_err(&text);
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn path_specs() {
        assert_eq!(path_spec("lane:-1").unwrap(), PathSpec::Lane(-1));
        assert!(format!("{:#}", path_spec("nowhere/trajectory.CSV").unwrap_err()).contains("nowhere/trajectory.CSV"));
        assert!(format!("{:#}", path_spec("lane:x").unwrap_err()).contains("not an integer"));
        assert!(format!("{:#}", path_spec("left").unwrap_err()).contains("FILE.csv"));
    }
}
