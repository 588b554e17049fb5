//! Judging a run: its exit code, stderr and files against its case's expectation, each failure
//! (a panic, an abort, a hang, an over-allocation, an error without a place, a wrong exit code,
//! output left by a failed run, an input changed) with what was seen; and whether an error
//! line names a place.

use crate::case::{Case, Expect, Kind, Place};
use std::collections::BTreeMap;

use super::{Entry, Observed};

/// What failed in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// Exit code 101 or "internal error" / "panicked" on stderr.
    Panic,
    /// Killed by a signal (not ours) or exit code 134.
    Abort,
    /// Still running at the timeout.
    Hang,
    /// Peak resident memory over the limit.
    OverAllocation,
    /// Exit code 2 without exactly one line naming the input and a place (or the flag).
    UnclearError,
    /// An exit code the case does not allow.
    WrongExit,
    /// A failed run left files or directories behind.
    PartialOutput,
    /// An input (or a file that was there before) changed or went.
    LostOutput,
}

impl Failure {
    /// Every failure, in table order.
    pub const ALL: [Failure; 8] = [
        Failure::Panic,
        Failure::Abort,
        Failure::Hang,
        Failure::OverAllocation,
        Failure::UnclearError,
        Failure::WrongExit,
        Failure::PartialOutput,
        Failure::LostOutput,
    ];

    /// The table's column header.
    pub fn title(self) -> &'static str {
        match self {
            Failure::Panic => "panics",
            Failure::Abort => "aborts",
            Failure::Hang => "hangs",
            Failure::OverAllocation => "over-allocations",
            Failure::UnclearError => "unclear errors",
            Failure::WrongExit => "wrong exit codes",
            Failure::PartialOutput => "partial outputs",
            Failure::LostOutput => "lost outputs",
        }
    }
}

/// Whether an error line states a place: `file:LINE:COL`, `line N`, `byte N`, `point N`, ...
pub fn names_place(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    let b = l.as_bytes();
    // `:N:` (file:line: or file:line:column)
    for (i, w) in b.windows(2).enumerate() {
        if w[0] == b':' && w[1].is_ascii_digit() {
            let rest = &b[i + 1..];
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if rest.get(n) == Some(&b':') {
                return true;
            }
        }
    }
    const WORDS: &[&str] = &[
        "line",
        "lines",
        "column",
        "byte",
        "bytes",
        "offset",
        "point",
        "points",
        "record",
        "records",
        "row",
        "rows",
        "vertex",
        "vlr",
        "evlr",
        "chunk",
        "entry",
        "node",
        "way",
        "road",
        "lane",
        "geometry",
        "index",
        "channel",
        "item",
        "element",
        "feature",
        "coordinate",
    ];
    for w in WORDS {
        let mut from = 0;
        while let Some(i) = l[from..].find(w) {
            let at = from + i;
            let before_ok = at == 0 || !b[at - 1].is_ascii_alphanumeric();
            let after = &b[at + w.len()..];
            let value = match after {
                [b' ', b'-' | b'#' | b'\'', c, ..] => c.is_ascii_digit(),
                [b' ', c, ..] => c.is_ascii_digit(),
                _ => false,
            } || (matches!(*w, "road" | "way" | "node" | "lane" | "element" | "item" | "channel")
                && matches!(after, [b' ', c, ..] if c.is_ascii_alphanumeric() || *c == b'\'' || *c == b'"' || *c == b'<'));
            if before_ok && value {
                return true;
            }
            from = at + w.len();
        }
    }
    false
}

/// The keys of a build config (a place in a TOML file).
const CONFIG_KEYS: &[&str] = &[
    "input",
    "axis",
    "road",
    "trajectory",
    "offset",
    "sensor-height",
    "pass",
    "crs",
    "out",
    "s-range",
    "cell",
    "tile",
    "voxel-size",
    "ribbon-cell",
    "buffer",
    "half-width",
];

/// The keys of a camera file.
const CAMERA_KEYS: &[&str] = &["width", "height", "fx", "fy", "cx", "cy", "hfov", "distortion", "mount"];

/// The keys of a world's JSON files (scene.json, manifest.json).
const WORLD_KEYS: &[&str] = &["voxel_size", "origin", "inputs"];

/// The keys of a scenario.
const SCENARIO_KEYS: &[&str] = &[
    "tick",
    "duration",
    "vehicle",
    "model",
    "ego",
    "route",
    "driver",
    "script",
    "prefabs",
    "actors",
    "gps",
    "scene_objects",
    "walls",
];

/// The keys of a saved simulation state.
const STATE_KEYS: &[&str] = &["tick", "ego", "driver", "actors", "prefabs", "contacts", "gps", "script_next"];

/// The keys whose naming is a place in a file of `kind` (a TOML or JSON file's key path).
fn keys_of(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Toml => CONFIG_KEYS,
        Kind::Beams => &roadscan::lidar::BEAM_KEYS,
        Kind::Camera => CAMERA_KEYS,
        Kind::World => WORLD_KEYS,
        Kind::Scenario => SCENARIO_KEYS,
        Kind::SimState => STATE_KEYS,
        _ => &[],
    }
}

/// What one run must satisfy: its case's expectation for the verb, the names an error line
/// must contain, and the state before it.
#[derive(Debug, Clone)]
pub struct Judge<'a> {
    pub case: &'a Case,
    pub expect: Expect,
    /// The hostile file's name, for a file case.
    pub file_name: Option<String>,
    /// For an argument case: the flag and its value as run.
    pub flag: Option<(String, Option<String>)>,
    pub out_before: BTreeMap<String, Entry>,
    pub out_after: BTreeMap<String, Entry>,
    pub inputs_before: BTreeMap<String, Entry>,
    pub inputs_after: BTreeMap<String, Entry>,
    /// Watched paths that appeared.
    pub appeared: Vec<String>,
}

/// The failures of a run, each with what was seen.
pub fn classify(j: &Judge, o: &Observed) -> Vec<(Failure, String)> {
    let mut f = Vec::new();
    let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    // A panic that reached main (101) or one printed before an abort is reported as a panic.
    let panicked = o.code == Some(101)
        || (!o.timed_out
            && !o.over_memory
            && (o.stderr.contains("internal error") || o.stderr.contains("panicked at")));
    let aborted = o.code == Some(134) || (o.signal.is_some() && !o.timed_out && !o.over_memory);
    if panicked {
        f.push((Failure::Panic, format!("exit {}", code_text(o))));
    }
    if aborted {
        f.push((Failure::Abort, format!("exit {}", code_text(o))));
    }
    if o.timed_out {
        f.push((Failure::Hang, format!("killed after {:.0} s", o.secs)));
    }
    if o.over_memory {
        f.push((Failure::OverAllocation, format!("peak RSS {} MiB", o.peak_rss >> 20)));
    }
    let crashed = panicked || aborted || o.timed_out || o.over_memory;
    let code = o.code.unwrap_or(-1);
    if !crashed && !j.expect.allows(code) {
        f.push((Failure::WrongExit, format!("exit {code}, expected {:?}", j.expect)));
    }
    if !crashed && code == 2 {
        let problem = if lines.len() != 1 {
            Some(format!("{} stderr lines", lines.len()))
        } else {
            let line = lines[0];
            match (&j.case.place, &j.flag) {
                (Place::Flag(_), Some((flag, value))) => {
                    // `--s-range`, or its name in words (`s range`, `s-range`), or its value.
                    let bare = flag.trim_start_matches('-');
                    let named = line.contains(flag.as_str())
                        || (bare.len() > 1
                            && flag.starts_with('-')
                            && (line.contains(bare) || line.contains(&bare.replace('-', " "))))
                        || value.as_ref().is_some_and(|v| line.contains(v.as_str()));
                    (!named).then(|| format!("does not name {flag}"))
                }
                _ => {
                    let name = j.file_name.as_deref().unwrap_or("");
                    let names_file = !name.is_empty() && line.contains(name);
                    let place = names_place(line) || keys_of(j.case.kind).iter().any(|k| line.contains(k));
                    if j.expect == Expect::Fail || names_file {
                        match (names_file, place) {
                            (false, _) => Some(format!("does not name {name}")),
                            (true, false) => Some("names no place (line, byte, point, ...)".to_string()),
                            _ => None,
                        }
                    } else {
                        // An `any` case may fail for a reason that is not the file (no points
                        // near the road); then it need not name the file.
                        None
                    }
                }
            }
        };
        if let Some(p) = problem {
            f.push((Failure::UnclearError, p));
        }
    }
    // A run that stopped on an error (exit 2 or a panic's 101) must leave nothing behind; a
    // killed run cannot clean up.
    if code == 2 || panicked {
        let mut left: Vec<String> =
            j.out_after.iter().filter(|(k, v)| j.out_before.get(*k) != Some(*v)).map(|(k, _)| k.clone()).collect();
        left.extend(j.appeared.iter().cloned());
        if !left.is_empty() {
            left.truncate(5);
            f.push((Failure::PartialOutput, format!("left {}", left.join(", "))));
        }
    }
    let mut lost: Vec<String> = j
        .inputs_before
        .iter()
        .filter(|(k, v)| j.inputs_after.get(*k) != Some(*v))
        .map(|(k, _)| format!("input {k}"))
        .collect();
    if code != 0 {
        lost.extend(
            j.out_before.iter().filter(|(k, v)| j.out_after.get(*k) != Some(*v)).map(|(k, _)| format!("earlier {k}")),
        );
    }
    if !lost.is_empty() {
        lost.truncate(5);
        f.push((Failure::LostOutput, format!("changed {}", lost.join(", "))));
    }
    f
}

pub(super) fn code_text(o: &Observed) -> String {
    match (o.code, o.signal) {
        (Some(c), _) => c.to_string(),
        (None, Some(s)) => format!("signal {s}"),
        _ => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_recognised_and_plain_messages_are_not() {
        for yes in [
            "roadscan: error: /x/a.xodr:12:5: <geometry> lacks required attribute 'length'",
            "roadscan: error: a.las: byte 227: point data offset past the end",
            "roadscan: error: a.las: point 17: outside the header bounds",
            "roadscan: error: a.csv:3: x 'nan' is not a finite number",
            "roadscan: error: a.crg: line 33: bad increment",
            "roadscan: error: a.xodr: road 1: length 1e9 m is implausible",
            "TOML parse error at line 1, column 8",
        ] {
            assert!(names_place(yes), "{yes}");
        }
        for no in [
            "roadscan: error: a.las: not a LAS file",
            "roadscan: error: stream did not contain valid UTF-8",
            "roadscan: error: no road-surface points",
            "roadscan: error: pipeline error",
        ] {
            assert!(!names_place(no), "{no}");
        }
    }
}
