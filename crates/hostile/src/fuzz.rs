//! Mutation fuzzing of the readers in-process, on the stable toolchain: seeds from the sample
//! files, mutants from [`crate::mutate`] (token-level for text), each fed to the target under
//! `catch_unwind`. A mutant that the reader accepts joins the pool of seeds (a cheap stand-in
//! for coverage feedback: accepted inputs reach deeper code).
//!
//! A panic is a finding: the input is written to the findings directory with the message
//! beside it, and the command exits non-zero. Before each call the input is also written to
//! `FINDINGS/current-TARGET.EXT` (the readers that need a path read it there), so an abort
//! (an allocation failure, a stack overflow) leaves its input behind; a watchdog thread turns
//! a call longer than the per-input timeout or a resident set over the memory limit into a
//! finding and ends the process.

use crate::mutate;
use crate::rng::Rng;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A reader under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Xodr,
    Crg,
    Las,
    Laz,
    Csv,
    Geojson,
    Osm,
    Toml,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 8] =
        [Target::Xodr, Target::Crg, Target::Las, Target::Laz, Target::Csv, Target::Geojson, Target::Osm, Target::Toml];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Xodr => "xodr",
            Target::Crg => "crg",
            Target::Las => "las",
            Target::Laz => "laz",
            Target::Csv => "csv",
            Target::Geojson => "geojson",
            Target::Osm => "osm",
            Target::Toml => "toml",
        }
    }

    /// The file extension of its inputs.
    fn ext(self) -> &'static str {
        match self {
            Target::Csv => "csv",
            t => t.name(),
        }
    }

    /// Whether token-level mutations apply.
    fn text(self) -> bool {
        !matches!(self, Target::Las | Target::Laz)
    }
}

impl std::str::FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Target, String> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown target '{s}' (one of {})", Target::ALL.map(Target::name).join(", ")))
    }
}

/// How to fuzz.
#[derive(Debug, Clone)]
pub struct Options {
    pub target: Target,
    pub seconds: f64,
    pub seed: u64,
    /// Crashes go here (created).
    pub findings: PathBuf,
    /// The repository (data/opendrive/demo.xodr) and the shared data (the samples).
    pub repo: PathBuf,
    pub shared: PathBuf,
    /// Longest call on one input.
    pub timeout: Duration,
    /// Largest resident set, bytes.
    pub rss_limit: u64,
}

/// What a session did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub execs: u64,
    pub accepted: u64,
    pub crashes: Vec<PathBuf>,
}

/// The seeds of `target`: the sample files (and the demo road) in memory.
pub fn seeds(target: Target, repo: &Path, shared: &Path) -> Vec<Vec<u8>> {
    let files = |dir: &Path, ext: &str| -> Vec<Vec<u8>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect())
            .unwrap_or_default();
        v.sort();
        v.iter()
            .filter(|p| p.metadata().is_ok_and(|m| m.len() < 2 << 20))
            .filter_map(|p| std::fs::read(p).ok())
            .collect()
    };
    let mut out = match target {
        Target::Xodr => {
            let mut v = files(&repo.join("data/opendrive"), "xodr");
            for d in ["esmini", "qc-opendrive", "libopendrive-rs"] {
                v.extend(files(&shared.join("opendrive").join(d), "xodr"));
            }
            v
        }
        Target::Crg => files(&shared.join("opencrg/crg-txt"), "crg"),
        Target::Las => files(&shared.join("las"), "las"),
        Target::Laz => files(&shared.join("las"), "laz"),
        Target::Csv => vec![
            b"x,y,z\n0,0,100\n10,1,100.1\n20,3,100.2\n30,6,100.3\n".to_vec(),
            b"time,x,y,z,pass\n0,650012.5,239996.0,102.2,1\n0.5,650017.2,239997.7,102.3,1\n1,650021.9,239999.4,102.4,1\n1.5,650026.6,240001.2,102.5,2\n"
                .to_vec(),
        ],
        Target::Geojson => vec![br#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[19.05,47.50],[19.0505,47.5003],[19.051,47.5007]]},"properties":{}}"#.to_vec()],
        Target::Osm => vec![br#"<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6">
  <node id="1" lat="47.5000" lon="19.0500"/>
  <node id="2" lat="47.5003" lon="19.0505"/>
  <node id="3" lat="47.5007" lon="19.0510"/>
  <way id="1"><nd ref="1"/><nd ref="2"/><nd ref="3"/><tag k="highway" v="residential"/></way>
</osm>
"#
        .to_vec()],
        Target::Toml => vec![
            b"input = [\"scan.laz\"]\ntrajectory = \"trajectory.csv\"\noffset = 1.625\nsensor-height = 2.2\ncrs = \"EPSG:23700\"\nout = \"out\"\ntile = 250\n".to_vec(),
            b"input = [\"a.las\", \"b.las\"]\naxis = \"axis.xodr\"\nroad = \"7\"\ns-range = \"0..150\"\ncell = 0.01\nvoxel-size = 1\nribbon-cell = 0.1\nbuffer = 50\nhalf-width = 10\n".to_vec(),
        ],
    };
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}

/// Feeds one input to the target (the input is in `path` too). `Ok(true)`: accepted.
fn call(target: Target, data: &[u8], path: &Path) -> bool {
    match target {
        Target::Xodr => {
            let Ok(text) = std::str::from_utf8(data) else { return false };
            let Ok(odr) = opendrive::read(text) else { return false };
            let _ = opendrive::validate::check(&odr, &Default::default());
            for road in odr.roads.iter().take(8) {
                let eval = opendrive::RoadEval::new(road);
                for k in 0..=4 {
                    let s = road.length * k as f64 / 4.0;
                    if s.is_finite() {
                        let _ = eval.pose(s);
                    }
                }
            }
            let _ = opendrive::write(&odr, &Default::default());
            true
        }
        Target::Crg => {
            let Ok(crg) = opencrg::read_bytes(data).or_else(|_| opencrg::read_file(path)) else { return false };
            let _ = opencrg::check::check(&crg);
            if let Ok(surface) = opencrg::Surface::new(&crg, true) {
                for (u, v) in [(0.0, 0.0), (1.0, 0.5), (-1e308, 1e308), (f64::NAN, 0.0)] {
                    let _ = surface.uv_to_z(u, v);
                }
            }
            true
        }
        Target::Las | Target::Laz => {
            let Ok(mut r) = scan::LasReader::open(path) else { return false };
            let _ = scan::summarize(&mut r);
            let Ok(mut r) = scan::LasReader::open(path) else { return false };
            let mut pts = scan::Points::default();
            let mut total = 0usize;
            while total < 4_000_000 {
                match r.read(&mut pts, 65_536) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => total += n,
                }
                pts = scan::Points::default();
            }
            true
        }
        Target::Csv => {
            let a = scan::axis::read_polyline_csv(path).is_ok();
            let b = scan::axis::read_trajectory(path, None, 1.5).is_ok();
            // Every pass, and the network they drive (merged, split at junction areas).
            let c = scan::axis::read_trajectory_passes(path).is_ok_and(|passes| {
                let traces: Vec<pipeline::traces::Trace> =
                    passes.into_iter().map(|(id, xyz)| pipeline::traces::Trace { id, xyz }).collect();
                pipeline::traces::ways_from_traces(&traces, &Default::default()).is_ok()
            });
            a || b || c
        }
        Target::Geojson => scan::axis::read_geojson(path).is_ok(),
        Target::Osm => scan::axis::read_osm_way(path, "1").is_ok(),
        // The build's own config reader (its parse, its error with line and column).
        Target::Toml => roadscan::ConfigFile::read(path).is_ok(),
    }
}

/// The peak resident set of this process, bytes.
fn own_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn digest(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Writes a finding (the input and what happened) and returns its path.
fn write_finding(dir: &Path, target: Target, data: &[u8], what: &str) -> PathBuf {
    let path = dir.join(format!("{}-{:016x}.{}", target.name(), digest(data), target.ext()));
    let _ = std::fs::write(&path, data);
    let _ = std::fs::write(path.with_extension(format!("{}.txt", target.ext())), format!("{what}\n"));
    path
}

/// Runs a session.
pub fn fuzz(o: &Options) -> Result<Summary, String> {
    std::fs::create_dir_all(&o.findings).map_err(|e| format!("{}: {e}", o.findings.display()))?;
    let current = o.findings.join(format!("current-{}.{}", o.target.name(), o.target.ext()));
    let mut pool = seeds(o.target, &o.repo, &o.shared);
    let base = pool.len();
    let mut rng = Rng::new(o.seed);
    let mut summary = Summary::default();

    // The panic hook keeps the message and place instead of printing.
    let last_panic: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
    {
        let keep = Arc::clone(&last_panic);
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
            if let Ok(mut k) = keep.lock() {
                *k = format!("{msg}{place}");
            }
        }));
    }

    // The watchdog: the input being read and since when.
    let state: Arc<Mutex<(Vec<u8>, Instant, bool)>> = Arc::new(Mutex::new((Vec::new(), Instant::now(), false)));
    {
        let state = Arc::clone(&state);
        let (dir, target, timeout, limit) = (o.findings.clone(), o.target, o.timeout, o.rss_limit);
        let current = current.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(50));
            let Ok(s) = state.lock() else { return };
            if !s.2 {
                continue;
            }
            let rss = own_rss();
            let what = if s.1.elapsed() > timeout {
                Some(format!("hang: more than {:.0} s on one input", timeout.as_secs_f64()))
            } else if rss > limit {
                Some(format!("over-allocation: resident set {} MiB", rss >> 20))
            } else {
                None
            };
            if let Some(what) = what {
                let p = write_finding(&dir, target, &s.0, &what);
                // The finding holds the input; `current` is for aborts only.
                let _ = std::fs::remove_file(&current);
                eprintln!("hostile fuzz {}: {what}: {}", target.name(), p.display());
                std::process::exit(3);
            }
        });
    }

    let t0 = Instant::now();
    let deadline = Duration::from_secs_f64(o.seconds.max(0.0));
    let mut i = 0u64;
    while t0.elapsed() < deadline {
        // The seeds as they are first, then mutants of the pool.
        let data = if (i as usize) < base {
            pool[i as usize].clone()
        } else {
            let k = rng.below(pool.len());
            let mut d = pool[k].clone();
            let other = pool[rng.below(pool.len())].clone();
            for _ in 0..1 + rng.below(4) {
                if o.target.text() && !rng.one_in(4) {
                    mutate::mutate_text(&mut rng, &mut d, &other);
                } else {
                    mutate::mutate_bytes(&mut rng, &mut d, &other);
                }
            }
            d
        };
        i += 1;
        std::fs::write(&current, &data).map_err(|e| format!("{}: {e}", current.display()))?;
        if let Ok(mut s) = state.lock() {
            *s = (data.clone(), Instant::now(), true);
        }
        let target = o.target;
        let r = std::panic::catch_unwind(|| call(target, &data, &current));
        if let Ok(mut s) = state.lock() {
            s.2 = false;
        }
        summary.execs += 1;
        match r {
            Ok(true) => {
                summary.accepted += 1;
                if pool.len() < base + 256 && data.len() < 4 << 20 {
                    pool.push(data);
                } else if data.len() < 4 << 20 {
                    let k = base + rng.below(256);
                    if let Some(slot) = pool.get_mut(k) {
                        *slot = data;
                    }
                }
            }
            Ok(false) => {}
            Err(_) => {
                let msg = last_panic.lock().map(|m| m.clone()).unwrap_or_default();
                let p = write_finding(&o.findings, o.target, &data, &format!("panic: {msg}"));
                if !summary.crashes.contains(&p) {
                    eprintln!("hostile fuzz {}: panic: {msg}: {}", o.target.name(), p.display());
                    summary.crashes.push(p);
                }
            }
        }
    }
    let _ = std::fs::remove_file(&current);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_seeds_and_takes_its_own_seed_without_panicking() {
        let repo = crate::gen::default_repo();
        let shared = crate::gen::default_shared(&repo);
        let dir = std::env::temp_dir().join(format!("hostile-fuzz-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        for t in [Target::Csv, Target::Geojson, Target::Osm, Target::Toml, Target::Xodr] {
            let s = seeds(t, &repo, &shared);
            assert!(!s.is_empty());
            let p = dir.join(format!("seed.{}", t.ext()));
            std::fs::write(&p, &s[0]).unwrap_or_default();
            assert!(call(t, &s[0], &p), "{} rejects its first seed", t.name());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
