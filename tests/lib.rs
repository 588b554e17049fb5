//! Helpers shared by the end-to-end tests.

use std::path::{Path, PathBuf};

pub use shared_data_probe::needs_shared_data;

#[path = "../crates/shared-data-probe/resolve.rs"]
mod resolve;

/// The shared reference data: `$ROADSCAN_SHARED_DATA` (from the workspace root when relative),
/// else `../shared/data` beside the workspace. A test that calls this carries
/// `#[roadscan_tests::needs_shared_data]`, which makes it ignored where the data are missing
/// outside CI.
///
/// # Panics
/// When the folder is missing (under `CI=true`, or in a test that lacks the attribute): the
/// test fails, it never passes without its data.
#[allow(clippy::panic)]
pub fn shared_data() -> PathBuf {
    let dir = resolve::shared_data_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    if !dir.is_dir() {
        panic!(
            "shared data not found at {} (set ROADSCAN_SHARED_DATA; outside CI a test marked \
             #[roadscan_tests::needs_shared_data] is ignored instead)",
            dir.display()
        );
    }
    dir
}

/// Every sample OpenDRIVE map below `shared/data/opendrive` (at least the 20 of them).
///
/// # Panics
/// As [`shared_data`], and when fewer than 20 maps are there.
pub fn sample_maps() -> Vec<PathBuf> {
    let data = shared_data();
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

/// Compares the file `written` with the golden file `data/golden/NAME` byte for byte, or
/// rewrites the golden under `ROADSCAN_BLESS=1`.
///
/// # Panics
/// On a mismatch, naming the first differing byte; when either file cannot be read.
#[allow(clippy::panic)]
pub fn golden(name: &str, written: &Path) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/golden").join(name);
    let bytes = std::fs::read(written).unwrap_or_else(|e| panic!("{}: {e}", written.display()));
    if std::env::var_os("ROADSCAN_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (ROADSCAN_BLESS=1 writes it)", path.display()));
    if bytes != want {
        let at = bytes.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(bytes.len().min(want.len()));
        panic!(
            "{} differs from {} at byte {at} ({} bytes written, {} in the golden); \
             if the change is intended, rerun with ROADSCAN_BLESS=1 and review the diff",
            written.display(),
            path.display(),
            bytes.len(),
            want.len()
        );
    }
}
