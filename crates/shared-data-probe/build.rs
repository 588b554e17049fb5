//! Decides, when the tests are built, whether the shared reference data are there: if they are
//! missing and `CI` is not `true`, sets `cfg(shared_data_missing)`, and `#[needs_shared_data]`
//! then marks its tests ignored. Rerun (and the tests rebuilt) when the data come or go or the
//! variables change.

#[path = "resolve.rs"]
mod resolve;

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_data_missing)");
    println!("cargo:rerun-if-changed=resolve.rs");
    println!("cargo:rerun-if-env-changed=ROADSCAN_SHARED_DATA");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = resolve::shared_data_dir(&Path::new(&manifest).join("../.."));
    // Present: watching the folder notices it going (cargo scans a folder's files, 92 here).
    // Missing: a missing path is always stale, so every build looks again and the data are
    // used as soon as they are there (the price: the tests are rebuilt on every run until then).
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rustc-env=ROADSCAN_SHARED_DATA_DIR={}", dir.display());
    if !dir.is_dir() {
        println!("cargo:rerun-if-env-changed=CI");
        if !std::env::var("CI").is_ok_and(|v| v == "true") {
            println!("cargo:rustc-cfg=shared_data_missing");
        }
    }
}
