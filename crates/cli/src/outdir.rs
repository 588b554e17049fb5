//! Products appear whole or not at all: a verb writes into a staging directory beside its
//! output directory, which replaces the output only when every step succeeded.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// A staging directory `.NAME.tmpPID` beside the output directory NAME; removed when dropped
/// without `commit`. An existing NAME is replaced only when it is empty or holds our products
/// (a manifest.json), so a mistyped `--out` cannot wipe a user's directory.
#[derive(Debug)]
pub(crate) struct Staging {
    /// Where the products are written.
    pub dir: PathBuf,
    out: PathBuf,
    committed: bool,
}

/// Fails unless `out` is new, empty or a roadscan output (holds a manifest.json): only our
/// own products are replaced.
pub fn replaceable(out: &Path) -> Result<()> {
    if out.exists() {
        let ours = out.join("manifest.json").is_file();
        let empty = std::fs::read_dir(out).map(|mut d| d.next().is_none()).unwrap_or(false);
        if !ours && !empty {
            bail!(
                "{}: exists and is not a roadscan output (no manifest.json); give a new or empty directory, or remove it",
                out.display()
            );
        }
    }
    Ok(())
}

impl Staging {
    /// Starts staging for the output directory `out` (what killed runs left beside it is
    /// cleared first).
    pub fn new(out: &Path) -> Result<Staging> {
        let name = out.file_name().context("--out must name a directory")?.to_string_lossy().into_owned();
        crate::create_parent(out)?;
        let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        replaceable(out)?;
        remove_stale(parent, &name);
        let dir = parent.join(format!(".{name}.tmp{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create the directory", dir.display()))?;
        Ok(Staging { dir, out: out.to_path_buf(), committed: false })
    }

    /// Puts the staged products in place of the output directory.
    pub fn commit(mut self) -> Result<()> {
        replace_dir(&self.dir, &self.out)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Removes what interrupted runs left beside `out` (`.NAME.tmpPID`, `.NAME.oldPID`) when
/// their process is gone (where /proc tells; elsewhere nothing is removed).
fn remove_stale(parent: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let pid = [".tmp", ".old"].iter().find_map(|tag| file.strip_prefix(&format!(".{name}{tag}")));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else { continue };
        let proc_dir = Path::new("/proc");
        if proc_dir.is_dir() && pid != std::process::id() && !proc_dir.join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Puts `work` where `out` is: the old `out` (if any) is moved aside first and removed last,
/// so an interruption leaves either the old products or the new ones.
fn replace_dir(work: &Path, out: &Path) -> Result<()> {
    let old = out.with_file_name(format!(
        ".{}.old{}",
        out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ));
    let had = out.exists();
    if had {
        std::fs::rename(out, &old).with_context(|| format!("{}: cannot move the old products aside", out.display()))?;
    }
    if let Err(e) = std::fs::rename(work, out) {
        if had {
            let _ = std::fs::rename(&old, out);
        }
        return Err(e).with_context(|| format!("{}: cannot move the products into place", out.display()));
    }
    if had {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

/// Output files written under staging names beside their own (`.NAME.tmpPID`) and renamed
/// into place together by `commit`; dropped without it, the staged files are removed. A verb
/// that writes several files (tiles, a CRG and its preview) leaves all or none.
#[derive(Debug, Default)]
pub(crate) struct StagedFiles {
    /// (staged, final) paths.
    files: std::cell::RefCell<Vec<(PathBuf, PathBuf)>>,
}

impl StagedFiles {
    /// The staging name of `out` (noted for `commit` and for the clean-up).
    pub fn stage(&self, out: &Path) -> PathBuf {
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let staged = out.with_file_name(format!(".{name}.tmp{}", std::process::id()));
        self.files.borrow_mut().push((staged.clone(), out.to_path_buf()));
        staged
    }

    /// The final names noted so far.
    pub fn finals(&self) -> Vec<PathBuf> {
        self.files.borrow().iter().map(|(_, out)| out.clone()).collect()
    }

    /// Renames every staged file that was written to its own name.
    pub fn commit(self) -> Result<()> {
        let files = std::mem::take(&mut *self.files.borrow_mut());
        // What would make a rename fail, before any is done.
        for (staged, out) in &files {
            if staged.exists() && out.is_dir() {
                for (s, _) in &files {
                    let _ = std::fs::remove_file(s);
                }
                bail!("{}: is a directory", out.display());
            }
        }
        for (k, (staged, out)) in files.iter().enumerate() {
            if !staged.exists() {
                continue;
            }
            if let Err(e) = std::fs::rename(staged, out) {
                // What is not in place yet is removed (what is stays: renames do not undo).
                for (s, _) in &files[k..] {
                    let _ = std::fs::remove_file(s);
                }
                bail!("{}: cannot put the output in place: {e}", out.display());
            }
        }
        Ok(())
    }
}

impl Drop for StagedFiles {
    fn drop(&mut self) {
        for (staged, _) in self.files.borrow().iter() {
            let _ = std::fs::remove_file(staged);
        }
    }
}
