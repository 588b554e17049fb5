//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};

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

/// A test's scratch directory, `$TMPDIR/roadscan-NAME-PID`, made empty when created and removed
/// when dropped, also when the test fails (a CI machine keeps its temporary directory between
/// runs, so scratch left behind adds up). `ROADSCAN_KEEP_SCRATCH=1` keeps it to look at.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// # Panics
    /// When the directory cannot be made (a test helper: a failed test is the right outcome).
    #[allow(clippy::panic)]
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("roadscan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("{}: {e}", dir.display());
        }
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os("ROADSCAN_KEEP_SCRATCH").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
