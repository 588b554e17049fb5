//! Whole files or none: written to a temporary sibling, renamed into place on success (the
//! shared [`atomic`] crate).

use crate::Error;
use std::path::Path;

/// Writes `path` through `f` atomically ([`atomic::write_atomic`]): a temporary file beside it,
/// flushed, synced and renamed when `f` succeeds, removed otherwise. A path without a file name
/// is [`Error::Invalid`]; any other failure is [`Error::Io`] naming `path`.
pub fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), Error> {
    if path.file_name().is_none() {
        return Err(Error::Invalid(format!("{}: not a file name", path.display())));
    }
    atomic::write_atomic(path, f).map_err(|cause| Error::Io { path: path.to_path_buf(), cause })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::io::Write;

    #[test]
    fn errors_name_the_file_and_leave_nothing_behind() {
        let d = std::env::temp_dir().join(format!("voxel-io-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("a.obj");
        std::fs::write(&p, "old").unwrap();
        let e = write_atomic(&p, |w| w.write_all(b"half").and(Err(std::io::Error::other("full")))).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: full", p.display()));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        write_atomic(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert!(matches!(write_atomic(Path::new("/"), |_| Ok(())), Err(Error::Invalid(_))));
        assert!(matches!(write_atomic(&d.join("no/a.obj"), |_| Ok(())), Err(Error::Io { .. })));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
