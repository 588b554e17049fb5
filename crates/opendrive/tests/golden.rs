//! Golden bytes of the writer: `data/opendrive/demo.xodr` read and written back with the
//! default options (OpenDRIVE 1.8) must give exactly `data/golden/demo.xodr`.
//!
//! The test writes to a scratch directory and compares the bytes with the golden file. A
//! change in the writer's output fails here; when the change is intended, run the test with
//! `ROADSCAN_BLESS=1` to rewrite the golden file, and review its diff before committing.
//!
//! The bytes are deterministic: the header's `date`, `version` and `vendor` are the demo
//! file's own (the writer copies them, it adds no date of its own), and numbers are printed
//! in their shortest round-trip form.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compares `written` with the golden file `name`, or rewrites the golden under
/// `ROADSCAN_BLESS=1`. A mismatch names the first differing byte.
fn golden(name: &str, written: &Path) {
    let path = repo().join("data/golden").join(name);
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

#[test]
fn demo_written_back_matches_the_golden_bytes() {
    let dir = roadscan_tests::Scratch::new("odr-golden");
    let odr = opendrive::read_file(repo().join("data/opendrive/demo.xodr")).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.join("demo.xodr");
    opendrive::write_file(&odr, &out, &opendrive::WriteOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    golden("demo.xodr", &out);
    // The golden is the same road: it reads back to the model it was written from.
    let back = opendrive::read_file(&out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, odr);
}
