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

use roadscan_tests::golden;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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
