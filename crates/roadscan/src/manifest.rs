//! manifest.json (inputs and outputs with sizes and SHA-256, parameters, timings) and the
//! JSON writing the products share.

use crate::config::BuildConfig;
use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub(crate) fn st_times(times: &[(String, f64)]) -> Value {
    Value::Array(times.iter().map(|(w, t)| json!({"stage": w, "seconds": t})).collect())
}

/// Size and SHA-256 (hex) of the file at `path`.
pub(crate) fn hash_file(path: &Path) -> Result<(u64, String)> {
    use sha2::Digest;
    let mut f = std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).with_context(|| format!("{}: cannot read", path.display()))?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((n, h.finalize().iter().map(|b| format!("{b:02x}")).collect()))
}

/// Files under `dir`, relative to it, in sorted order.
pub(crate) fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(&rel))
            .with_context(|| format!("{}: cannot list", dir.join(&rel).display()))?
            .collect::<std::io::Result<_>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = rel.join(e.file_name());
            if e.file_type()?.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// manifest.json: inputs (size, SHA-256), parameters, versions, outputs (size, SHA-256),
/// timings.
pub(crate) fn write_manifest(
    s: &BuildConfig,
    dir: &Path,
    hashes: &[(u64, String)],
    times: &[(String, f64)],
    secs: f64,
    part: Option<&Value>,
) -> Result<()> {
    let inputs: Vec<Value> =
        s.input.iter().zip(hashes).map(|(p, (n, h))| json!({"path": shown(p, dir), "bytes": n, "sha256": h})).collect();
    let mut outputs = Vec::new();
    for rel in files_under(dir)? {
        if rel == Path::new("manifest.json") || is_input(&rel, s, dir) {
            continue;
        }
        let (n, h) = hash_file(&dir.join(&rel))?;
        outputs.push(json!({"path": rel.display().to_string(), "bytes": n, "sha256": h}));
    }
    let mut m = json!({
        "roadscan": {"version": env!("CARGO_PKG_VERSION")},
        "formats": {"opendrive": "1.8", "opencrg": "KRBI (OpenCRG 1.2)", "las": "1.0-1.4 in", "gltf": "2.0 binary"},
        "inputs": inputs,
        "parameters": parameters(s, dir),
        "outputs": outputs,
        "timings": {"seconds": secs, "stages": st_times(times)},
    });
    if let Some(part) = part {
        m["road_part"] = part.clone();
    }
    write_json(&dir.join("manifest.json"), &m)?;
    Ok(())
}

/// The parameters as the manifest records them: an axis file inside the output (the demo's
/// survey) relative to it, as the inputs are, not at the staging directory it was read from.
fn parameters(s: &BuildConfig, dir: &Path) -> Value {
    let mut v = s.to_json();
    for key in ["file", "trajectory"] {
        if let Some(p) = v["axis"][key].as_str().map(|p| shown(Path::new(p), dir)) {
            v["axis"][key] = Value::String(p);
        }
    }
    v
}

/// Writes `v` as pretty JSON with a final newline, atomically; returns the bytes.
pub(crate) fn write_json(path: &Path, v: &Value) -> Result<Vec<u8>> {
    let mut text = serde_json::to_vec_pretty(v)?;
    text.push(b'\n');
    voxel::write_atomic(path, |w| w.write_all(&text))?;
    Ok(text)
}

/// Whether `rel` (under `dir`) is one of the inputs (the demo keeps its survey there).
pub(crate) fn is_input(rel: &Path, s: &BuildConfig, dir: &Path) -> bool {
    s.input.iter().any(|p| p == &dir.join(rel))
}

/// A path as the manifest shows it: relative to the output when inside it, else as given.
pub(crate) fn shown(p: &Path, dir: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}

/// Peak resident memory of this process, MB (Linux; None elsewhere).
pub(crate) fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AxisSource;

    #[test]
    fn an_axis_inside_the_output_is_recorded_relative_to_it_and_one_outside_as_given() {
        let dir = Path::new("/tmp/.roadscan-tmp-42/demo");
        let traj = |path: PathBuf| BuildConfig {
            axis: AxisSource::Trajectory { path, offset: 0.0, sensor_height: None, pass: None },
            ..BuildConfig::default()
        };
        let inside = parameters(&traj(dir.join("survey/trajectory.csv")), dir);
        assert_eq!(inside["axis"]["trajectory"], "survey/trajectory.csv");
        let outside = parameters(&traj(PathBuf::from("/data/run1/trajectory.csv")), dir);
        assert_eq!(outside["axis"]["trajectory"], "/data/run1/trajectory.csv");
        let file = BuildConfig {
            axis: AxisSource::File { path: PathBuf::from("axis.xodr"), road: None },
            ..BuildConfig::default()
        };
        assert_eq!(parameters(&file, dir)["axis"]["file"], "axis.xodr");
    }
}
