// Where the shared reference data are: one copy, used by this crate's build script and, through
// `#[path]`, by `roadscan-tests` (tests/lib.rs), so a test and its ignore attribute agree.

/// `$ROADSCAN_SHARED_DATA` (taken from the workspace root when relative), else the folder
/// `shared/data` beside the workspace (`../shared/data` from its root). `workspace` is the
/// workspace root, made absolute and free of `..` here when it exists.
pub fn shared_data_dir(workspace: &std::path::Path) -> std::path::PathBuf {
    let root = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
    match std::env::var_os("ROADSCAN_SHARED_DATA") {
        Some(v) if !v.is_empty() => root.join(v),
        _ => root.parent().unwrap_or(&root).join("shared/data"),
    }
}
