//! The runner: every relevant `roadscan` verb on every case, each in a fresh empty output
//! directory, watched for panics, aborts, hangs and memory, and judged by its exit code, its
//! stderr and what it left behind.
//!
//! **Measuring memory.** A watchdog polls `VmHWM` (the peak resident set) in
//! `/proc/PID/status` every few milliseconds while the run lives; a run whose peak passes the
//! limit (1 GiB) is killed at once, so a hostile case cannot take the machine's memory. What a
//! poll can miss is a peak reached and left within the last few milliseconds before exit: an
//! allocation that large takes longer than that to fault in. (`prlimit --as` would turn an
//! over-allocation into an allocation failure, i.e. an abort, and count the address space
//! that glibc's arenas and thread stacks reserve, which is not memory used.)
//!
//! **Killing.** Each run is the leader of its own process group; a hang (the timeout), an
//! over-allocation, or the end of a run kills the whole group with SIGKILL.

use crate::case::{Case, Expect, Kind, Place};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `roadscan` binary.
    pub roadscan: PathBuf,
    /// The corpus (`hostile gen`'s DIR).
    pub cases: PathBuf,
    /// Runs at a time.
    pub jobs: usize,
    /// Wall time a run may take.
    pub timeout: Duration,
    /// Peak resident memory a run may reach, bytes.
    pub rss_limit: u64,
    /// Only cases whose name (or `NAME VERB`) contains this.
    pub only: Option<String>,
    /// Where runs happen (default: a new directory in the system's temporary directory,
    /// removed at the end).
    pub work: Option<PathBuf>,
}

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

/// What a run did, as seen from outside.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Killed for its memory.
    pub over_memory: bool,
    /// Peak resident memory seen, bytes.
    pub peak_rss: u64,
    /// Its stderr (the first MiB).
    pub stderr: String,
    /// Wall time.
    pub secs: f64,
}

/// One file or directory in a listing: (is a directory, size, content hash).
pub type Entry = (bool, u64, u64);

/// Every file and directory under `dir`, hidden ones included, by relative path.
pub fn listing(dir: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.is_dir() {
                out.insert(rel, (true, 0, 0));
                stack.push(p);
            } else {
                out.insert(rel, (false, meta.len(), hash_file(&p)));
            }
        }
    }
    out
}

/// FNV-1a of a file's bytes (0 when unreadable): enough to see a change.
fn hash_file(p: &Path) -> u64 {
    let Ok(mut f) = std::fs::File::open(p) else { return 0 };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut buf = vec![0u8; 1 << 16];
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The peak resident set of process `pid`, bytes (0 when gone).
fn peak_rss(pid: u32) -> u64 {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return 0 };
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Runs `program args` in `cwd` with `stdin`, in a process group of its own, watched for time
/// and memory.
pub fn execute(
    program: &Path,
    args: &[String],
    cwd: &Path,
    stdin: Option<&[u8]>,
    timeout: Duration,
    rss_limit: u64,
) -> std::io::Result<Observed> {
    let t0 = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pid = child.id();
    let group = rustix::process::Pid::from_raw(pid as i32);
    let kill = || {
        if let Some(g) = group {
            let _ = rustix::process::kill_process_group(g, rustix::process::Signal::KILL);
        }
    };
    let feeder = match (stdin, child.stdin.take()) {
        (Some(bytes), Some(mut pipe)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let reader = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut keep = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = e.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if keep.len() < 1 << 20 {
                    keep.extend_from_slice(&buf[..n]);
                }
            }
            keep
        })
    });
    let mut obs = Observed::default();
    let mut pause = Duration::from_millis(2);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        obs.peak_rss = obs.peak_rss.max(peak_rss(pid));
        if obs.peak_rss > rss_limit && !obs.over_memory {
            obs.over_memory = true;
            kill();
        }
        if t0.elapsed() > timeout && !obs.timed_out {
            obs.timed_out = true;
            kill();
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    // Whatever the run started goes with it.
    kill();
    obs.code = status.code();
    obs.signal = status.signal();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    if let Some(r) = reader {
        obs.stderr = String::from_utf8_lossy(&r.join().unwrap_or_default()).into_owned();
    }
    obs.secs = t0.elapsed().as_secs_f64();
    Ok(obs)
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
                    let place = names_place(line)
                        || (j.case.kind == Kind::Toml && CONFIG_KEYS.iter().any(|k| line.contains(k)));
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

fn code_text(o: &Observed) -> String {
    match (o.code, o.signal) {
        (Some(c), _) => c.to_string(),
        (None, Some(s)) => format!("signal {s}"),
        _ => "?".into(),
    }
}

/// The verbs run on a file of `kind`, each with its arguments ({F} the file, {O} the output
/// directory, {AX} {LAS} {TRAJ} the partners).
pub fn verbs(kind: Kind) -> Vec<(&'static str, Vec<&'static str>)> {
    let pipeline = |axis: &'static str, input: &'static str| {
        vec![
            ("crg", vec!["crg", "--axis", axis, "--input", input, "--out", "{O}/road.crg"]),
            ("voxel", vec!["voxel", "--axis", axis, "--input", input, "--out", "{O}/scene.obj"]),
            ("ribbons", vec!["ribbons", "--axis", axis, "--input", input, "--out", "{O}/ribbons"]),
            ("xodr", vec!["xodr", "--axis", axis, "--input", input, "--out", "{O}/road.xodr"]),
            ("build", vec!["build", "--axis", axis, "--input", input, "--out", "{O}/build"]),
        ]
    };
    match kind {
        Kind::Las => {
            let mut v = vec![("info", vec!["info", "{F}"])];
            v.extend(pipeline("{AX}", "{F}"));
            v
        }
        Kind::Xodr => {
            let mut v = vec![
                ("check", vec!["check", "{F}"]),
                ("eval", vec!["eval", "{F}"]),
                ("convert", vec!["convert", "{F}", "{O}/out.xodr"]),
                ("axis", vec!["axis", "--xodr", "{F}", "--road", "1", "--out", "{O}/axis.xodr"]),
            ];
            v.extend(pipeline("{F}", "{LAS}"));
            v.push((
                "synth",
                // 10 m of road, sparse: the whole demo road's truth CRG alone is 66 MB.
                vec![
                    "synth",
                    "--scene",
                    "{F}",
                    "--s-range",
                    "0..10",
                    "--out",
                    "{O}/survey",
                    "--points-per-rev",
                    "16",
                    "--rate",
                    "20",
                ],
            ));
            v
        }
        Kind::Crg => vec![
            ("check", vec!["check", "{F}"]),
            ("info", vec!["info", "{F}"]),
            ("crg-eval", vec!["crg-eval", "{F}", "--mods"]),
            ("convert", vec!["convert", "{F}", "{O}/out.crg", "--format", "LRFI"]),
            ("render", vec!["render", "{F}", "--out", "{O}/out.png"]),
            ("xodr", vec!["xodr", "--axis", "{AX}", "--input", "{LAS}", "--crg", "{F}", "--out", "{O}/road.xodr"]),
        ],
        Kind::Polyline => vec![("axis", vec!["axis", "--polyline", "{F}", "--out", "{O}/axis.xodr"])],
        Kind::Geojson => {
            vec![("axis", vec!["axis", "--polyline", "{F}", "--crs", "EPSG:23700", "--out", "{O}/axis.xodr"])]
        }
        Kind::Trajectory => vec![
            ("axis", vec!["axis", "--trajectory", "{F}", "--offset", "0", "--out", "{O}/axis.xodr"]),
            ("build", vec!["build", "--trajectory", "{F}", "--input", "{LAS}", "--out", "{O}/build"]),
        ],
        Kind::Osm => {
            vec![("axis", vec!["axis", "--osm", "{F}", "--way", "1", "--crs", "EPSG:23700", "--out", "{O}/axis.xodr"])]
        }
        Kind::Toml => vec![
            ("build", vec!["build", "--config", "{F}", "--input", "{LAS}", "--axis", "{AX}", "--out", "{O}/build"]),
            ("plan", vec!["plan", "--config", "{F}", "--input", "{LAS}", "--axis", "{AX}", "--out", "{O}/build"]),
        ],
        Kind::Args => Vec::new(),
    }
}

/// What `crg-eval` reads.
const CRG_EVAL_STDIN: &[u8] = b"uv 0 0\nxy 0 0\nuv 1e308 -1e308\nxy nan inf\nuv 5 0.5\n";

/// The good files cases are paired with (absolute paths).
#[derive(Debug, Clone)]
pub struct Partners {
    pub axis: PathBuf,
    pub las: PathBuf,
    pub traj: PathBuf,
    pub crg: PathBuf,
}

impl Partners {
    /// A small virtual survey of the demo road's first 20 m (`roadscan synth`), in `work`.
    pub fn make(roadscan: &Path, cases: &Path, work: &Path) -> Result<Partners, String> {
        let axis = cases.join("partners/demo.xodr");
        let out = work.join("partner");
        let args: Vec<String> = [
            "synth",
            "--scene",
            &axis.display().to_string(),
            "--s-range",
            "0..20",
            "--out",
            &out.display().to_string(),
            "--points-per-rev",
            "100",
            "-q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = execute(roadscan, &args, work, None, Duration::from_secs(600), 8 << 30)
            .map_err(|e| format!("{}: {e}", roadscan.display()))?;
        if o.code != Some(0) {
            return Err(format!("the partner survey (roadscan {}) failed: {}", args.join(" "), o.stderr.trim()));
        }
        Ok(Partners {
            axis,
            las: out.join("scan.las"),
            traj: out.join("trajectory.csv"),
            crg: out.join("truth/surface.crg"),
        })
    }
}

/// One run to make.
#[derive(Debug, Clone)]
struct Job {
    case: usize,
    verb: String,
    template: Vec<String>,
}

/// One run's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub case: String,
    pub verb: String,
    pub failures: Vec<(Failure, String)>,
    pub stderr_line: String,
    pub code: String,
    pub secs: f64,
}

/// The runs of `cases` (argument cases: one run each, verb = their first argument).
fn jobs(cases: &[Case], only: Option<&str>) -> Vec<Job> {
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let list: Vec<(String, Vec<String>)> = if c.kind == Kind::Args {
            vec![(c.args.first().cloned().unwrap_or_default(), c.args.clone())]
        } else {
            verbs(c.kind).into_iter().map(|(v, t)| (v.to_string(), t.into_iter().map(String::from).collect())).collect()
        };
        for (verb, template) in list {
            if c.expect_for(&verb) == Expect::Skip {
                continue;
            }
            if let Some(p) = only {
                if !c.name.contains(p) && !format!("{} {verb}", c.name).contains(p) {
                    continue;
                }
            }
            out.push(Job { case: i, verb, template });
        }
    }
    out
}

/// Runs the corpus; returns every run's outcome (failing or not) and the number of inputs.
pub fn run(o: &Options) -> Result<(Vec<Outcome>, usize), String> {
    let manifest = o.cases.join("manifest.tsv");
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let cases = crate::case::read_manifest(&text)?;
    let own_work = o.work.is_none();
    let work =
        o.work.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("hostile-run-{}", std::process::id())));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let work = std::fs::canonicalize(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let cases_dir = std::fs::canonicalize(&o.cases).map_err(|e| format!("{}: {e}", o.cases.display()))?;
    let roadscan = std::fs::canonicalize(&o.roadscan).map_err(|e| format!("{}: {e}", o.roadscan.display()))?;
    let list = jobs(&cases, o.only.as_deref());
    let partners = Partners::make(&roadscan, &cases_dir, &work)?;
    let partner_files = [&partners.axis, &partners.las, &partners.traj, &partners.crg];
    let partners_before: Vec<u64> = partner_files.iter().map(|p| hash_file(p)).collect();

    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    let watched = Mutex::new(());
    let total = list.len();
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = list.get(k) else { break };
                let case = &cases[job.case];
                let dir = work.join(format!("runs/{k}"));
                let outcome = if case.watch.is_empty() {
                    one_run(o, &roadscan, &cases_dir, &partners, case, job, &dir)
                } else {
                    let _serial = watched.lock();
                    one_run(o, &roadscan, &cases_dir, &partners, case, job, &dir)
                };
                let _ = std::fs::remove_dir_all(&dir);
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                if n.is_multiple_of(250) {
                    eprintln!("hostile: {n}/{total} runs");
                }
                if let Ok(mut r) = results.lock() {
                    r.push((k, outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(k, _)| *k);
    let mut outcomes: Vec<Outcome> = results.into_iter().map(|(_, o)| o).collect();
    for (p, before) in partner_files.iter().zip(partners_before) {
        if hash_file(p) != before {
            outcomes.push(Outcome {
                case: "partners".into(),
                verb: "-".into(),
                failures: vec![(Failure::LostOutput, format!("changed {}", p.display()))],
                stderr_line: String::new(),
                code: "-".into(),
                secs: 0.0,
            });
        }
    }
    if own_work {
        let _ = std::fs::remove_dir_all(&work);
    }
    let inputs = cases.iter().filter(|c| list.iter().any(|j| cases[j.case].name == c.name)).count();
    Ok((outcomes, inputs))
}

/// Makes one run in `dir` (`dir/out` its output directory, `dir/in` copies of partners that
/// the arguments name as outputs too).
fn one_run(
    o: &Options,
    roadscan: &Path,
    cases_dir: &Path,
    partners: &Partners,
    case: &Case,
    job: &Job,
    dir: &Path,
) -> Outcome {
    let fail = |what: String| Outcome {
        case: case.name.clone(),
        verb: job.verb.clone(),
        failures: vec![(Failure::WrongExit, what)],
        stderr_line: String::new(),
        code: "-".into(),
        secs: 0.0,
    };
    let (out, inp) = (dir.join("out"), dir.join("in"));
    if let Err(e) = std::fs::create_dir_all(&out).and_then(|_| std::fs::create_dir_all(&inp)) {
        return fail(format!("cannot make {}: {e}", dir.display()));
    }
    let file = case.file.as_ref().map(|f| cases_dir.join(f));
    let case_dir = file.as_ref().and_then(|f| f.parent().map(Path::to_path_buf));
    let axis = case.partner.as_ref().map_or(partners.axis.clone(), |p| cases_dir.join(p));
    let copy = |src: &Path| {
        let to = inp.join(src.file_name().unwrap_or_default());
        let _ = std::fs::copy(src, &to);
        to.display().to_string()
    };
    let mut args = Vec::new();
    for t in &job.template {
        let mut a = t.clone();
        let subst: [(&str, &dyn Fn() -> String); 10] = [
            ("{F}", &|| file.as_ref().map(|f| f.display().to_string()).unwrap_or_default()),
            ("{O}", &|| out.display().to_string()),
            ("{AX}", &|| axis.display().to_string()),
            ("{LAS}", &|| partners.las.display().to_string()),
            ("{TRAJ}", &|| partners.traj.display().to_string()),
            ("{CRG}", &|| partners.crg.display().to_string()),
            ("{DIR}", &|| inp.display().to_string()),
            ("{LASCOPY}", &|| copy(&partners.las)),
            ("{AXCOPY}", &|| copy(&axis)),
            ("{TRAJCOPY}", &|| copy(&partners.traj)),
        ];
        for (k, v) in subst {
            if a.contains(k) {
                a = a.replace(k, &v());
            }
        }
        args.push(a);
    }
    args.push("--quiet".into());
    let input_listing = || {
        let mut l = listing(&inp);
        if let Some(d) = &case_dir {
            l.extend(listing(d).into_iter().map(|(k, v)| (format!("case/{k}"), v)));
        }
        l
    };
    let inputs_before = input_listing();
    let out_before = listing(&out);
    let watch_before: Vec<bool> = case.watch.iter().map(|w| Path::new(w).exists()).collect();
    let stdin = (job.verb == "crg-eval").then_some(CRG_EVAL_STDIN);
    let observed = match execute(roadscan, &args, &out, stdin, o.timeout, o.rss_limit) {
        Ok(obs) => obs,
        Err(e) => return fail(format!("cannot run {}: {e}", roadscan.display())),
    };
    let mut appeared = Vec::new();
    for (w, before) in case.watch.iter().zip(watch_before) {
        if !before && Path::new(w).exists() {
            appeared.push(w.clone());
            // roadscan made it; it must not stay on the machine.
            let _ = std::fs::remove_dir_all(w).or_else(|_| std::fs::remove_file(w));
        }
    }
    let flag = match &case.place {
        Place::Flag(f) => {
            let value = args
                .iter()
                .position(|a| a == f)
                .and_then(|i| args.get(i + 1))
                .cloned()
                .or_else(|| args.iter().find_map(|a| a.strip_prefix(&format!("{f}=")).map(String::from)));
            let f = if f == "{DIR}" { inp.display().to_string() } else { f.clone() };
            Some((f, value))
        }
        Place::File => None,
    };
    let judge = Judge {
        case,
        expect: case.expect_for(&job.verb),
        file_name: file.as_ref().and_then(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()),
        flag,
        out_before,
        out_after: listing(&out),
        inputs_before,
        inputs_after: input_listing(),
        appeared,
    };
    let failures = classify(&judge, &observed);
    let stderr_line = observed.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(300).collect();
    Outcome {
        case: case.name.clone(),
        verb: job.verb.clone(),
        failures,
        stderr_line,
        code: code_text(&observed),
        secs: observed.secs,
    }
}

/// The table and a line per failing run; the number of failing runs.
pub fn report(outcomes: &[Outcome], inputs: usize, w: &mut impl Write) -> std::io::Result<usize> {
    let runs = outcomes.iter().filter(|o| o.case != "partners").count();
    let mut header = format!("{:>8} {:>6}", "inputs", "runs");
    let mut row = format!("{inputs:>8} {runs:>6}");
    for f in Failure::ALL {
        let n = outcomes.iter().filter(|o| o.failures.iter().any(|(g, _)| *g == f)).count();
        let width = f.title().len().max(5);
        header.push_str(&format!("  {:>width$}", f.title()));
        row.push_str(&format!("  {n:>width$}"));
    }
    writeln!(w, "{header}\n{row}")?;
    let failing: Vec<&Outcome> = outcomes.iter().filter(|o| !o.failures.is_empty()).collect();
    if !failing.is_empty() {
        writeln!(w, "\nfailing runs ({}):", failing.len())?;
    }
    for o in &failing {
        let what: Vec<String> = o.failures.iter().map(|(f, d)| format!("{}: {d}", f.title())).collect();
        writeln!(w, "FAIL {} {} [exit {}] {} | {}", o.case, o.verb, o.code, what.join("; "), o.stderr_line)?;
    }
    Ok(failing.len())
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
