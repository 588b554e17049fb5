//! Helpers shared by the end-to-end tests.

use std::path::PathBuf;

/// `$ROADSCAN_SHARED_DATA`, or `../shared/data` beside the workspace. `None` (the test then
/// skips with a message) only outside CI; under `CI=true` a missing folder fails the test.
pub fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("ROADSCAN_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "shared data not found at {} (set ROADSCAN_SHARED_DATA)",
        dir.display()
    );
    eprintln!("skipping: shared data not found at {}", dir.display());
    None
}

/// Every sample OpenDRIVE map below `shared/data/opendrive` (empty when the data are
/// missing outside CI).
pub fn sample_maps() -> Vec<PathBuf> {
    let Some(data) = shared_data() else { return Vec::new() };
    let mut out = Vec::new();
    for sub in ["esmini", "qc-opendrive", "libOpenDRIVE", "libopendrive-rs"] {
        let Ok(rd) = std::fs::read_dir(data.join("opendrive").join(sub)) else { continue };
        out.extend(rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "xodr")));
    }
    out.sort();
    assert!(out.len() >= 20, "expected the 20 sample maps in {}, found {}", data.display(), out.len());
    out
}
