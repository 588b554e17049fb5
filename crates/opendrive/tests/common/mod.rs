//! Where the shared reference data are.

use std::path::PathBuf;

/// `$ROADSCAN_SHARED_DATA`, or `../shared/data` beside the workspace. Returns `None` (the test
/// then skips with a message) only outside CI; under `CI=true` a missing folder fails.
pub fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("ROADSCAN_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("shared data not found at {} (set ROADSCAN_SHARED_DATA)", dir.display());
    }
    eprintln!("skipping: shared data not found at {}", dir.display());
    None
}

/// Every sample map below `opendrive/`.
#[allow(dead_code)]
pub fn sample_maps(data: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["esmini", "qc-opendrive", "libOpenDRIVE", "libopendrive-rs"] {
        let Ok(rd) = std::fs::read_dir(data.join("opendrive").join(sub)) else { continue };
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x == "xodr") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "expected the 20 sample maps, found {}", out.len());
    out
}
