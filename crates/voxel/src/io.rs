//! Whole files or none: written to a temporary sibling, renamed into place on success.

use crate::Error;
use std::io::Write;
use std::path::Path;

/// Writes `path` through `f` atomically: a temporary file beside it, renamed when `f` and the
/// flush succeed, removed otherwise.
pub fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), Error> {
    let io = |cause| Error::Io { path: path.to_path_buf(), cause };
    let name = path.file_name().ok_or_else(|| Error::Invalid(format!("{}: not a file name", path.display())))?;
    let tmp = path.with_file_name(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        f(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}
