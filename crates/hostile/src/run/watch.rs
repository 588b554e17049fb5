//! One run watched from outside: the process started as the leader of its own group, its
//! peak resident set polled from `/proc/PID/status`, the group killed on a hang, an
//! over-allocation or the run's end; and the listing (with content hashes) of what it left.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
pub(super) fn hash_file(p: &Path) -> u64 {
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
