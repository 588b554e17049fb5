//! Whole files or none: the one way roadscan writes a file.
//!
//! A file is written to a temporary file beside its target, named `.NAME.roadscan-tmp-PID`
//! ([`TMP_MARK`]), then flushed, synced to disk and renamed over the target; the directory is
//! synced after the rename where the platform allows it. A rename within one directory is
//! atomic, so a reader (or a crash) sees either the previous file or the new one, never a
//! half-written one. On any error before the rename the temporary file is removed and the
//! previous target is left untouched.
//!
//! - [`write_atomic`] fills a buffered writer through a closure;
//! - [`write_bytes_atomic`] writes bytes already in memory;
//! - [`TempFile`] is the temporary file itself, for writers that outlive one call (a stream
//!   of chunks): [`TempFile::commit`] renames it into place, and dropping it uncommitted
//!   removes it.
//!
//! Errors are plain [`io::Error`]s without the target's name; callers add it.

#![warn(missing_docs)]

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The mark in every temporary file's name: `.NAME` + `TMP_MARK` + the process id.
pub const TMP_MARK: &str = ".roadscan-tmp-";

/// Buffer size of a temporary file's writer: large writes (CRG rows) go out in few calls.
const BUFFER: usize = 1 << 20;

/// Writes `path` whole or not at all: `fill` writes into a buffered temporary file beside
/// `path`, which is then flushed, synced and renamed over `path` (the directory synced after
/// where possible).
///
/// On any error (from `fill`, the flush, the sync or the rename) the temporary file is removed,
/// the previous content of `path` is left untouched, and the error is returned. A path without
/// a file name, or in a directory that does not exist, is an error.
///
/// ```
/// use std::io::Write;
/// let path = std::env::temp_dir().join(format!("atomic-doc-{}.txt", std::process::id()));
/// atomic::write_atomic(&path, |w| writeln!(w, "whole or nothing"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "whole or nothing\n");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) -> io::Result<()> {
    let mut tmp = TempFile::beside(path)?;
    fill(tmp.writer())?;
    tmp.commit()
}

/// Writes `bytes` to `path` whole or not at all; see [`write_atomic`].
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

/// A temporary file `.NAME.roadscan-tmp-PID` beside a target `NAME`, written through a buffered
/// writer (also through `Write` and `Seek` on the `TempFile` itself).
///
/// [`TempFile::commit`] flushes it, syncs it to disk and renames it over the target. Dropped
/// without a commit (an error, a panic unwinding), it removes itself, so nothing is left
/// beside the target.
///
/// A writer that must own its file (a library's encoder) can write through a clone of
/// [`TempFile::file`] (`File::try_clone`) and keep the `TempFile` as the guard that commits
/// or removes it; [`TempFile::commit`] syncs the file whichever handle wrote it.
#[derive(Debug)]
pub struct TempFile {
    // Fields drop in order: the file is closed before the guard removes it (Windows cannot
    // remove an open file).
    writer: BufWriter<File>,
    guard: Guard,
    /// The file it replaces on commit.
    target: PathBuf,
    /// The target's directory (synced after the rename).
    dir: PathBuf,
}

/// Removes the temporary file on drop unless disarmed (renamed).
#[derive(Debug)]
struct Guard {
    path: PathBuf,
    armed: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl TempFile {
    /// Creates (or truncates) the temporary file beside `target`: `.NAME.roadscan-tmp-PID` in
    /// the target's directory (the current directory for a bare file name).
    ///
    /// Errors: `target` has no file name (`""`, `"/"`, `"a/.."`: [`io::ErrorKind::InvalidInput`]),
    /// or the temporary file cannot be created (a directory that does not exist, no
    /// permission).
    pub fn beside(target: &Path) -> io::Result<TempFile> {
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
            .to_string_lossy()
            .into_owned();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let path = dir.join(format!(".{name}{TMP_MARK}{}", std::process::id()));
        let file = File::create(&path)?;
        Ok(TempFile {
            writer: BufWriter::with_capacity(BUFFER, file),
            guard: Guard { path, armed: true },
            target: target.to_path_buf(),
            dir,
        })
    }

    /// The temporary file's path.
    pub fn path(&self) -> &Path {
        &self.guard.path
    }

    /// The target it replaces on commit.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The open temporary file (unbuffered; bytes still in [`TempFile::writer`]'s buffer are
    /// not in it yet). Clone it (`try_clone`) to hand a writer of its own to a library.
    pub fn file(&self) -> &File {
        self.writer.get_ref()
    }

    /// The buffered writer of the temporary file.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        &mut self.writer
    }

    /// Flushes the writer, syncs the file to disk, renames it over the target and syncs the
    /// directory (where the platform allows opening one; a failure there is ignored, since the
    /// target is already replaced). On an error before the rename the temporary file is removed
    /// and the target is left untouched.
    pub fn commit(self) -> io::Result<()> {
        let TempFile { writer, mut guard, target, dir } = self;
        // On an error the file is closed (dropped first, as the later local) and the guard then
        // removes it.
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        // Closed before the rename: Windows cannot rename an open file.
        drop(file);
        std::fs::rename(&guard.path, &target)?;
        guard.armed = false;
        sync_dir(&dir);
        Ok(())
    }
}

impl Write for TempFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Seek for TempFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer.seek(pos)
    }
}

/// Syncs a directory, so a rename in it survives a crash (Unix; elsewhere a directory cannot
/// be opened as a file and this does nothing).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A fresh empty directory for one test.
    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roadscan-atomic-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        n.sort();
        n
    }

    #[test]
    fn writes_a_new_file_and_replaces_an_old_one() {
        let d = scratch("new");
        let p = d.join("a.txt");
        write_bytes_atomic(&p, b"first").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        write_atomic(&p, |w| {
            w.write_all(b"sec")?;
            w.write_all(b"ond")
        })
        .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(names(&d), ["a.txt"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_fill_failing_half_way_leaves_the_old_file_and_no_temporary() {
        let d = scratch("half");
        let p = d.join("a.bin");
        std::fs::write(&p, b"old content").unwrap();
        // More than the buffer, so part of it has reached the temporary file on disk.
        let big = vec![7u8; 3 * BUFFER];
        let r = write_atomic(&p, |w| {
            w.write_all(&big)?;
            let on_disk = std::fs::read_dir(&d)
                .unwrap()
                .flatten()
                .find(|e| e.file_name().to_string_lossy().contains(TMP_MARK))
                .map(|e| e.metadata().unwrap().len());
            assert!(on_disk.is_some_and(|n| n > 0), "the temporary file holds part of the data: {on_disk:?}");
            Err(io::Error::other("disk on fire"))
        });
        assert_eq!(r.unwrap_err().to_string(), "disk on fire");
        assert_eq!(std::fs::read(&p).unwrap(), b"old content");
        assert_eq!(names(&d), ["a.bin"]);
        // And where there was no file, there is still none.
        let q = d.join("b.bin");
        assert!(write_atomic(&q, |w| w.write_all(b"x").and(Err(io::Error::other("no")))).is_err());
        assert_eq!(names(&d), ["a.bin"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn temp_file_is_named_beside_its_target_and_commit_replaces_the_target() {
        let d = scratch("commit");
        let p = d.join("road.las");
        std::fs::write(&p, b"old").unwrap();
        let mut t = TempFile::beside(&p).unwrap();
        let expected = d.join(format!(".road.las.roadscan-tmp-{}", std::process::id()));
        assert_eq!(t.path(), expected);
        assert_eq!(t.target(), p);
        assert!(t.path().exists());
        t.write_all(b"new ").unwrap();
        t.writer().write_all(b"content").unwrap();
        // A second handle (as a library's own writer would have) writes the same file.
        let mut clone = t.file().try_clone().unwrap();
        t.flush().unwrap();
        clone.write_all(b"!").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old", "the target is untouched before the commit");
        t.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new content!");
        assert_eq!(names(&d), ["road.las"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn temp_file_seeks() {
        let d = scratch("seek");
        let p = d.join("h.bin");
        let mut t = TempFile::beside(&p).unwrap();
        t.write_all(b"xxxxbody").unwrap();
        t.seek(SeekFrom::Start(0)).unwrap();
        t.write_all(b"HEAD").unwrap();
        t.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"HEADbody");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dropping_an_uncommitted_temp_file_removes_it() {
        let d = scratch("drop");
        let p = d.join("x.crg");
        std::fs::write(&p, b"keep").unwrap();
        let mut t = TempFile::beside(&p).unwrap();
        t.write_all(&vec![1u8; 2 * BUFFER]).unwrap();
        let tmp = t.path().to_path_buf();
        assert!(tmp.exists());
        drop(t);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&p).unwrap(), b"keep");
        assert_eq!(names(&d), ["x.crg"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failing_rename_keeps_the_target_and_removes_the_temporary() {
        let d = scratch("rename");
        // A file cannot be renamed over a directory that holds something.
        let p = d.join("out");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("inner"), b"i").unwrap();
        assert!(write_bytes_atomic(&p, b"data").is_err());
        assert!(p.is_dir());
        assert_eq!(names(&d), ["out"]);
        assert_eq!(names(&p), ["inner"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn paths_without_a_file_name_or_directory_are_errors() {
        for p in ["", "/", "..", "a/.."] {
            let e = write_bytes_atomic(Path::new(p), b"x").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p:?}");
            assert!(TempFile::beside(Path::new(p)).is_err(), "{p:?}");
        }
        let d = scratch("nodir");
        let missing = d.join("no").join("such").join("f.txt");
        let e = write_bytes_atomic(&missing, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(TempFile::beside(&missing).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert_eq!(names(&d), Vec::<String>::new());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
