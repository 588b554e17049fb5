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
//!
//! The parts: this module makes the runs (verbs per kind, partners, jobs, the report); `watch`
//! runs one process in its own group watched for time and memory and lists what it left,
//! `judge` classifies a run's failures against its case's expectation.

mod judge;
mod watch;

pub use judge::{classify, names_place, Failure, Judge};
pub use watch::{execute, listing, Entry, Observed};

use crate::case::{Case, Expect, Kind, Place};
use judge::code_text;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use watch::hash_file;

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
    /// Only cases whose name (or `NAME VERB`) contains this (or one of its comma-separated parts).
    pub only: Option<String>,
    /// Where runs happen (default: a new directory in the system's temporary directory,
    /// removed at the end).
    pub work: Option<PathBuf>,
}

/// The verbs run on a file of `kind`, each with its arguments ({F} the file, {O} the output
/// directory, {AX} {LAS} {TRAJ} the partners, {WORLD} the partner world `partners/world`, {W}
/// the case's own world `cases/NAME/world`, {SCN} the partner scenario `partners/sim.toml`).
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
                ("connect", vec!["connect", "{F}", "{O}/connected.xodr"]),
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
        Kind::Osm => vec![
            ("axis", vec!["axis", "--osm", "{F}", "--way", "1", "--crs", "EPSG:23700", "--out", "{O}/axis.xodr"]),
            // Every way: the network.
            ("axis-network", vec!["axis", "--osm", "{F}", "--crs", "EPSG:23700", "--out", "{O}/network.xodr"]),
        ],
        Kind::Toml => vec![
            ("build", vec!["build", "--config", "{F}", "--input", "{LAS}", "--axis", "{AX}", "--out", "{O}/build"]),
            ("plan", vec!["plan", "--config", "{F}", "--input", "{LAS}", "--axis", "{AX}", "--out", "{O}/build"]),
        ],
        // Sent unpaced to the discard port on loopback.
        Kind::Pcap => {
            vec![("replay", vec!["replay", "{F}", "--udp", "127.0.0.1:9", "--position-port", "9", "--unpaced"])]
        }
        // Over the partner world ({WORLD}), or the case's own world ({W}); short runs.
        Kind::Beams => vec![(
            "lidar",
            vec![
                "lidar",
                "--world",
                "{WORLD}",
                "--sensor",
                "{F}",
                "--roadside",
                "voxels",
                "--duration",
                "0.02",
                "--pcap",
                "{O}/out.pcap",
            ],
        )],
        Kind::Camera => vec![(
            "camera",
            vec!["camera", "--world", "{WORLD}", "--camera", "{F}", "--duration", "0.1", "--out", "{O}/frames"],
        )],
        Kind::SensorPath => vec![
            (
                "lidar",
                vec![
                    "lidar",
                    "--world",
                    "{WORLD}",
                    "--path",
                    "{F}",
                    "--roadside",
                    "voxels",
                    "--duration",
                    "0.02",
                    "--pcap",
                    "{O}/out.pcap",
                ],
            ),
            (
                "camera",
                vec![
                    "camera",
                    "--world",
                    "{WORLD}",
                    "--path",
                    "{F}",
                    "--duration",
                    "0.1",
                    "--width",
                    "32",
                    "--height",
                    "24",
                    "--out",
                    "{O}/frames",
                ],
            ),
        ],
        Kind::World => vec![
            ("lidar", vec!["lidar", "--world", "{W}", "--duration", "0.02", "--pcap", "{O}/out.pcap"]),
            (
                "camera",
                vec![
                    "camera",
                    "--world",
                    "{W}",
                    "--duration",
                    "0.1",
                    "--width",
                    "32",
                    "--height",
                    "24",
                    "--out",
                    "{O}/frames",
                ],
            ),
        ],
        // The demo scene; half a second (50 ticks), and the file's own duration.
        Kind::Scenario => vec![
            ("sim", vec!["sim", "--scene", "demo", "{F}", "--duration", "0.5", "--csv", "{O}/ego.csv"]),
            ("sim-own", vec!["sim", "--scene", "demo", "{F}", "--csv", "{O}/ego.csv", "--events", "{O}/events.jsonl"]),
        ],
        // Resumed with the partner scenario (`partners/sim.toml`, 50 ticks) the seed state is of.
        Kind::SimState => {
            vec![("sim", vec!["sim", "--scene", "demo", "{SCN}", "--resume", "{F}", "--csv", "{O}/ego.csv"])]
        }
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
            if let Some(only) = only {
                let run = format!("{} {verb}", c.name);
                if !only.split(',').any(|p| c.name.contains(p) || run.contains(p)) {
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
        let world_of_case = cases_dir.join("cases").join(&case.name).join("world");
        let subst: [(&str, &dyn Fn() -> String); 13] = [
            ("{SCN}", &|| cases_dir.join("partners/sim.toml").display().to_string()),
            ("{WORLD}", &|| cases_dir.join("partners/world").display().to_string()),
            ("{W}", &|| world_of_case.display().to_string()),
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
