//! One output discipline for every verb: products appear whole or not at all, the previous
//! products survive any interruption, and an input is never written over.
//!
//! A verb names its inputs and its outputs (files or directories) to an [`Outputs`] before the
//! work. Each output is written under its own name inside a staging directory
//! `.roadscan-tmp-PID` beside it; [`Outputs::commit`] writes a journal (`commit.json`) into
//! every staging directory, renames the staged outputs into place (a replaced directory is
//! first moved into `.roadscan-old-PID`) and removes the staging and old directories. A run
//! killed before its journal is complete leaves only staging directories; killed after, it
//! leaves a journal that the next run finishes (rolls forward). The next run writing beside
//! them recovers or removes what dead runs left: staging directories, old directories (put
//! back where their output is missing), and the CRG builder's spill directories.
//! Ctrl-C (SIGINT, SIGTERM) removes this run's staging directories, unless a commit is under
//! way, which then ends first.

use crate::progress::Note;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Staging directories: `.roadscan-tmp-PID` beside the outputs.
const TMP: &str = ".roadscan-tmp-";
/// Directories replaced by a commit, until it ends: `.roadscan-old-PID`.
const OLD: &str = ".roadscan-old-";
/// The CRG builder's spill directories: `.roadscan-spill-PID-N` (pipeline::surface).
const SPILL: &str = ".roadscan-spill-";
/// The journal of a commit, inside each of its staging directories.
const JOURNAL: &str = "commit.json";

/// One output: where it is written, and where it goes.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Target {
    staged: PathBuf,
    out: PathBuf,
    dir: bool,
    /// The output is removed, not replaced (a tile of an earlier, longer run).
    #[serde(default)]
    remove: bool,
}

/// What a commit does, written before its first rename.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    targets: Vec<Target>,
    /// The staging directories (each holds a copy of this journal).
    holders: Vec<PathBuf>,
    /// Where replaced directories wait for the end of the commit.
    olds: Vec<PathBuf>,
}

/// An input of the run: refused as an output, and as the content of an output directory.
#[derive(Debug)]
struct Input {
    path: PathBuf,
    canonical: Option<PathBuf>,
    id: Option<(u64, u64)>,
}

/// The outputs of one run; see the module documentation. Dropped without `commit`, it removes
/// what it staged.
#[derive(Debug)]
pub struct Outputs {
    inputs: Vec<Input>,
    targets: RefCell<Vec<Target>>,
    /// (output directory, its staging directory) pairs made so far.
    holders: RefCell<Vec<(PathBuf, PathBuf)>>,
    /// An error found when an output was named where it could not be returned (`file_or_defer`).
    deferred: RefCell<Option<anyhow::Error>>,
    committed: bool,
}

/// `path` when its extension is one of `exts` (any case), else an error naming the option: a
/// slip of the keyboard must not write a picture over a map or a grid over a point cloud.
pub fn with_extension<'a>(option: &str, path: &'a Path, exts: &[&str]) -> Result<&'a Path> {
    let ok = path.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.iter().any(|x| x.eq_ignore_ascii_case(e)));
    if !ok {
        let list: Vec<String> = exts.iter().map(|e| format!(".{e}")).collect();
        bail!("{option} {}: must name a {} file", path.display(), list.join(" or "));
    }
    Ok(path)
}

/// The device and inode of a file: the same file under any name or link.
fn file_id(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// `p` made absolute (against the current directory), without resolving links.
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The directory `out` is in (`.` for a bare name).
fn parent_of(out: &Path) -> PathBuf {
    out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

impl Outputs {
    /// The outputs of a run that reads `inputs` (files; directories and missing paths are
    /// allowed and only compared by name).
    pub fn new<P: AsRef<Path>>(inputs: impl IntoIterator<Item = P>) -> Outputs {
        let inputs = inputs
            .into_iter()
            .map(|p| {
                let path = p.as_ref().to_path_buf();
                let meta = std::fs::metadata(&path).ok();
                Input { canonical: path.canonicalize().ok(), id: meta.as_ref().and_then(file_id), path }
            })
            .collect();
        Outputs {
            inputs,
            targets: RefCell::new(Vec::new()),
            holders: RefCell::new(Vec::new()),
            deferred: RefCell::new(None),
            committed: false,
        }
    }

    /// Names the output file `out`; returns where to write it (the same file name in the
    /// staging directory). Fails when `out`'s directory is missing, when `out` is a directory,
    /// an input of the run, or an output named before.
    pub fn file(&self, out: &Path) -> Result<PathBuf> {
        let (holder, name) = self.target(out)?;
        if out.is_dir() {
            bail!("{}: is a directory; give a file name", out.display());
        }
        let staged = holder.join(&name);
        self.targets.borrow_mut().push(Target {
            staged: staged.clone(),
            out: parent_of(&holder).join(&name),
            dir: false,
            remove: false,
        });
        Ok(staged)
    }

    /// As `file`, for callers that cannot return an error there (a tile's name asked for in
    /// the middle of the work): the error is kept and returned by `commit`.
    pub fn file_or_defer(&self, out: &Path) -> PathBuf {
        match self.file(out) {
            Ok(p) => p,
            Err(e) => {
                let mut d = self.deferred.borrow_mut();
                if d.is_none() {
                    *d = Some(e);
                }
                // Written, never committed; removed when the outputs are dropped.
                self.holders.borrow().first().map_or_else(deferred_scratch, |(_, h)| h.join(".deferred"))
            }
        }
    }

    /// Names a file of an earlier run that the commit removes with the rest (a tile past the
    /// last one written now); not an input of the run.
    pub fn remove(&self, out: &Path) -> Result<()> {
        let (holder, name) = self.target(out)?;
        let staged = holder.join(&name);
        self.targets.borrow_mut().push(Target {
            staged,
            out: parent_of(&holder).join(&name),
            dir: false,
            remove: true,
        });
        Ok(())
    }

    /// Names the output directory `out`, to be replaced as a whole; returns the staging
    /// directory to fill (created, empty). An existing `out` is replaced only when it is
    /// empty or holds `marker` (a file our products include), so a mistyped name cannot wipe
    /// a user's directory; an `out` holding an input of the run is refused.
    pub fn dir(&self, out: &Path, marker: &str) -> Result<PathBuf> {
        let (holder, name) = self.target(out)?;
        if out.exists() {
            if !out.is_dir() {
                bail!("{}: exists and is not a directory", out.display());
            }
            let ours = out.join(marker).exists();
            let empty = std::fs::read_dir(out).map(|mut d| d.next().is_none()).unwrap_or(false);
            if !ours && !empty {
                bail!(
                    "{}: exists and is not a roadscan output (no {marker}); give a new or empty directory, or remove it",
                    out.display()
                );
            }
            if let Ok(dir) = out.canonicalize() {
                for i in &self.inputs {
                    if i.canonical.as_ref().is_some_and(|c| c.starts_with(&dir)) {
                        bail!(
                            "{}: holds the input {}, which replacing the directory would delete; give another output directory",
                            out.display(),
                            i.path.display()
                        );
                    }
                }
            }
        }
        let staged = holder.join(&name);
        std::fs::create_dir(&staged).with_context(|| format!("{}: cannot create the directory", staged.display()))?;
        self.targets.borrow_mut().push(Target {
            staged: staged.clone(),
            out: parent_of(&holder).join(&name),
            dir: true,
            remove: false,
        });
        Ok(staged)
    }

    /// The checks common to files and directories; the staging directory for `out` and its
    /// file name.
    fn target(&self, out: &Path) -> Result<(PathBuf, std::ffi::OsString)> {
        let name = match out.file_name() {
            Some(n) if out.components().next_back().is_some_and(|c| matches!(c, std::path::Component::Normal(_))) => {
                n.to_os_string()
            }
            _ => bail!("{}: not a file or directory name", out.display()),
        };
        let parent = parent_of(out);
        if !parent.is_dir() {
            bail!("{}: no such directory (to write {} in)", parent.display(), out.display());
        }
        let holder = self.holder(&parent).with_context(|| format!("{}: cannot write there", out.display()))?;
        if let Ok(meta) = std::fs::metadata(out) {
            let id = file_id(&meta);
            let canonical = out.canonicalize().ok();
            for i in &self.inputs {
                let same_id = id.is_some() && i.id == id;
                let same_path = canonical.is_some() && i.canonical == canonical;
                if same_id || same_path {
                    bail!("{}: is an input of this run ({}); give another output", out.display(), i.path.display());
                }
            }
        }
        // Outputs are kept by the canonical directory they are in (as their staging is).
        let abs = parent_of(&holder).join(&name);
        if self.targets.borrow().iter().any(|t| t.out == abs) {
            bail!("{}: named as an output twice", out.display());
        }
        Ok((holder, name))
    }

    /// The staging directory beside the outputs in `parent` (made the first time, after what
    /// dead runs left there is recovered or removed).
    fn holder(&self, parent: &Path) -> Result<PathBuf> {
        let key = parent.canonicalize().unwrap_or_else(|_| absolute(parent));
        if let Some((_, h)) = self.holders.borrow().iter().find(|(p, _)| *p == key) {
            return Ok(h.clone());
        }
        recover(&key);
        let h = key.join(format!("{TMP}{}", std::process::id()));
        // Ours from an earlier Outputs of this process (demo chains verbs) is left alone.
        if !h.is_dir() {
            std::fs::create_dir(&h).with_context(|| format!("{}: cannot create the directory", h.display()))?;
        }
        register(&h);
        self.holders.borrow_mut().push((key, h.clone()));
        Ok(h)
    }

    /// Puts every staged output in place (see the module documentation). Outputs named but
    /// never written are skipped.
    pub fn commit(mut self) -> Result<()> {
        if let Some(e) = self.deferred.borrow_mut().take() {
            return Err(e);
        }
        let targets: Vec<Target> = self
            .targets
            .borrow()
            .iter()
            .filter(|t| t.remove || std::fs::symlink_metadata(&t.staged).is_ok())
            .cloned()
            .collect();
        for t in &targets {
            if !t.dir && t.out.is_dir() {
                bail!("{}: is a directory", t.out.display());
            }
        }
        let holders: Vec<PathBuf> = self.holders.borrow().iter().map(|(_, h)| h.clone()).collect();
        let olds = self.holders.borrow().iter().map(|(p, _)| p.join(format!("{OLD}{}", std::process::id()))).collect();
        let journal = Journal { targets, holders, olds };
        let text = serde_json::to_vec_pretty(&journal)?;
        let _guard = Committing::start();
        for h in &journal.holders {
            fault("journal");
            let path = h.join(JOURNAL);
            atomic::write_bytes_atomic(&path, &text).with_context(|| format!("{}: cannot write", path.display()))?;
        }
        roll_forward(&journal)?;
        self.committed = true;
        Ok(())
    }
}

/// Where a deferred output is written when no staging directory exists yet.
fn deferred_scratch() -> PathBuf {
    std::env::temp_dir().join(format!("{TMP}{}-deferred", std::process::id()))
}

impl Drop for Outputs {
    fn drop(&mut self) {
        // The scratch name carries this process's id, so no other run's file is touched.
        let _ = std::fs::remove_file(deferred_scratch());
        let holders = std::mem::take(&mut *self.holders.borrow_mut());
        for (_, h) in holders {
            if !self.committed {
                let _ = std::fs::remove_dir_all(&h);
            }
            unregister(&h);
        }
    }
}

impl Journal {
    /// Whether this journal, found in the staging directory `holder`, is one a commit of ours
    /// wrote: it lists `holder`; each staging directory holds only staged outputs, each beside
    /// its output, and each old directory is one of the same process beside them. A journal
    /// that renames anything else is ignored (and its staging directory removed).
    fn is_ours(&self, holder: &Path) -> bool {
        let Some(pid) = holder.file_name().and_then(|n| pid_after(&n.to_string_lossy(), TMP)) else { return false };
        let named =
            |p: &Path, prefix: &str| p.file_name().is_some_and(|n| n.to_string_lossy() == format!("{prefix}{pid}"));
        self.holders.iter().any(|h| h == holder)
            && self.holders.iter().all(|h| named(h, TMP))
            && self.olds.iter().all(|o| named(o, OLD) && self.holders.iter().any(|h| parent_of(h) == parent_of(o)))
            && self.targets.iter().all(|t| {
                let beside = parent_of(&t.staged) == parent_of(&t.out).join(format!("{TMP}{pid}"));
                beside && t.staged.file_name().is_some() && t.staged.file_name() == t.out.file_name()
            })
    }
}

/// Carries out a journal: renames what is still staged into place (an existing output
/// directory moved aside first), then removes the old and staging directories. Doing it
/// again after an interruption finishes the same commit.
fn roll_forward(j: &Journal) -> Result<()> {
    for t in &j.targets {
        if t.remove {
            fault("rename");
            match std::fs::remove_file(&t.out) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("{}: cannot remove", t.out.display()))
                }
                _ => continue,
            }
        }
        if std::fs::symlink_metadata(&t.staged).is_err() {
            continue; // In place already.
        }
        if t.dir && std::fs::symlink_metadata(&t.out).is_ok() {
            let parent = parent_of(&t.out);
            let old = j.olds.iter().find(|o| parent_of(o) == parent).cloned().unwrap_or_else(|| {
                parent.join(format!("{OLD}{}", std::process::id())) // Not reached: olds cover every parent.
            });
            std::fs::create_dir_all(&old).with_context(|| format!("{}: cannot create", old.display()))?;
            let aside = old.join(t.out.file_name().unwrap_or_default());
            fault("aside");
            std::fs::rename(&t.out, &aside)
                .with_context(|| format!("{}: cannot move the old products aside", t.out.display()))?;
        }
        fault("rename");
        std::fs::rename(&t.staged, &t.out)
            .with_context(|| format!("{}: cannot put the output in place", t.out.display()))?;
    }
    for o in &j.olds {
        fault("remove-old");
        let _ = std::fs::remove_dir_all(o);
    }
    for h in &j.holders {
        fault("remove-staging");
        let _ = std::fs::remove_dir_all(h);
    }
    Ok(())
}

/// Whether process `pid` is gone (where /proc tells; elsewhere every process counts as alive,
/// so nothing is removed).
fn dead(pid: u32) -> bool {
    let proc_dir = Path::new("/proc");
    pid != std::process::id() && proc_dir.join("self").exists() && !proc_dir.join(pid.to_string()).exists()
}

/// The PID in `name` after `prefix` (up to a `-` or the end).
fn pid_after(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.split('-').next()?.parse().ok()
}

/// The PID of a file written atomically (`.NAME.roadscan-tmp-PID`, see the `atomic` crate).
fn temporary_pid(name: &str) -> Option<u32> {
    let (_, pid) = name.strip_prefix('.')?.rsplit_once(atomic::TMP_MARK)?;
    pid.parse().ok()
}

/// Recovers or removes what dead runs left in `dir`: their commits are finished, their
/// staging and spill directories removed, and directories they had moved aside put back
/// where their output is missing (removed where it is not).
pub fn recover(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    // Staging directories first: a journal finishes its commit, which clears its old directory.
    for name in &names {
        if pid_after(name, TMP).is_some_and(dead) {
            let h = dir.join(name);
            let journal = std::fs::read(h.join(JOURNAL))
                .ok()
                .and_then(|b| serde_json::from_slice::<Journal>(&b).ok())
                .filter(|j| j.is_ours(&h));
            match journal {
                Some(j) => {
                    if let Err(e) = roll_forward(&j) {
                        note(&Note::Warning(format!("cannot finish the interrupted commit in {}: {e:#}", h.display())));
                    }
                }
                None => {
                    let _ = std::fs::remove_dir_all(&h);
                }
            }
        } else if pid_after(name, SPILL).is_some_and(dead) {
            let _ = std::fs::remove_dir_all(dir.join(name));
        } else if temporary_pid(name).is_some_and(dead) {
            // A file a dead run was writing atomically (`.NAME.roadscan-tmp-PID`).
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    for name in &names {
        if pid_after(name, OLD).is_some_and(dead) {
            let old = dir.join(name);
            if !old.exists() {
                continue; // Removed by a commit finished above.
            }
            if let Ok(inner) = std::fs::read_dir(&old) {
                for e in inner.flatten() {
                    let out = dir.join(e.file_name());
                    if std::fs::symlink_metadata(&out).is_err() && std::fs::rename(e.path(), &out).is_ok() {
                        note(&Note::Info(format!("recovered {} (left aside by an interrupted run)", out.display())));
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&old);
        }
    }
}

/// Staging directories of this process, removed on Ctrl-C; and whether a commit is running.
static LIVE: Mutex<(Vec<PathBuf>, bool, bool)> = Mutex::new((Vec::new(), false, false));

fn register(h: &Path) {
    if let Ok(mut l) = LIVE.lock() {
        l.0.push(h.to_path_buf());
    }
}

fn unregister(h: &Path) {
    if let Ok(mut l) = LIVE.lock() {
        l.0.retain(|p| p != h);
    }
}

/// Marks a commit under way: Ctrl-C waits for its end.
struct Committing;

impl Committing {
    fn start() -> Committing {
        if let Ok(mut l) = LIVE.lock() {
            l.1 = true;
        }
        Committing
    }
}

impl Drop for Committing {
    fn drop(&mut self) {
        let pending = LIVE.lock().map(|mut l| {
            l.1 = false;
            l.2
        });
        if pending.unwrap_or(false) {
            interrupted();
        }
    }
}

/// The Ctrl-C (SIGINT, SIGTERM) handler: removes this run's staging (and spill) directories
/// and exits with 130; during a commit, only notes the signal, and the commit's end exits.
pub fn on_signal() {
    let committing = LIVE.lock().map(|mut l| {
        l.2 = true;
        l.1
    });
    if !committing.unwrap_or(false) {
        interrupted();
    }
}

fn interrupted() {
    let holders = LIVE.lock().map(|l| l.0.clone()).unwrap_or_default();
    let me = std::process::id().to_string();
    for h in holders {
        if let Some(parent) = h.parent() {
            for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.strip_prefix(SPILL).and_then(|r| r.split('-').next()) == Some(me.as_str()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let _ = std::fs::remove_dir_all(&h);
    }
    match HOOKS.lock().ok().and_then(|h| h.interrupted) {
        Some(f) => f(),
        None => std::process::exit(130),
    }
}

/// What the program does at the points where the library cannot decide for it: how a note
/// of a recovery is shown, and how the process ends after Ctrl-C removed what it staged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hooks {
    /// Shows a note (default: none shown).
    pub note: Option<fn(&Note)>,
    /// Ends the process after an interruption (default: exit code 130).
    pub interrupted: Option<fn()>,
}

static HOOKS: Mutex<Hooks> = Mutex::new(Hooks { note: None, interrupted: None });

/// Sets the process's [`Hooks`] (a program calls it once at its start).
pub fn set_hooks(hooks: Hooks) {
    if let Ok(mut h) = HOOKS.lock() {
        *h = hooks;
    }
}

fn note(n: &Note) {
    if let Some(f) = HOOKS.lock().ok().and_then(|h| h.note) {
        f(n);
    }
}

/// A test hook: with `ROADSCAN_FAULT=STEP:N` in the environment, the process aborts (no
/// clean-up, as if killed) at the N-th (from 1) passage through the commit step STEP (`journal`,
/// `aside`, `rename`, `remove-old`, `remove-staging`). The fault tests kill every verb at
/// each step this way.
fn fault(step: &str) {
    static COUNT: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());
    let Some(spec) = std::env::var_os("ROADSCAN_FAULT") else { return };
    let spec = spec.to_string_lossy().into_owned();
    let Some((want, n)) = spec.split_once(':') else { return };
    if want != step {
        return;
    }
    let Ok(mut c) = COUNT.lock() else { return };
    let k = match c.iter_mut().find(|(s, _)| s == step) {
        Some((_, k)) => {
            *k += 1;
            *k
        }
        None => {
            c.push((step.to_string(), 1));
            1
        }
    };
    if n.parse::<u32>().ok() == Some(k) {
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roadscan-outdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_commit_puts_files_and_directories_in_place_and_leaves_nothing_else() {
        let d = scratch("commit");
        std::fs::write(d.join("a.txt"), "old").unwrap();
        std::fs::create_dir(d.join("out")).unwrap();
        std::fs::write(d.join("out/manifest.json"), "old").unwrap();
        let o = Outputs::new(Vec::<PathBuf>::new());
        std::fs::write(o.file(&d.join("a.txt")).unwrap(), "new").unwrap();
        let s = o.dir(&d.join("out"), "manifest.json").unwrap();
        std::fs::write(s.join("manifest.json"), "new").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "old");
        o.commit().unwrap();
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(d.join("out/manifest.json")).unwrap(), "new");
        let mut left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, ["a.txt", "out"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_deferred_error_leaves_no_scratch_file_behind() {
        let d = scratch("defer");
        // A file where a directory is needed: the output cannot be staged.
        std::fs::write(d.join("plain"), "x").unwrap();
        let o = Outputs::new(Vec::<PathBuf>::new());
        let p = o.file_or_defer(&d.join("plain").join("tile.crg"));
        std::fs::write(&p, "written, never committed").unwrap();
        assert!(o.commit().is_err());
        assert!(!p.exists(), "{} left behind", p.display());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dropped_without_commit_nothing_changes() {
        let d = scratch("drop");
        std::fs::write(d.join("a.txt"), "old").unwrap();
        {
            let o = Outputs::new(Vec::<PathBuf>::new());
            std::fs::write(o.file(&d.join("a.txt")).unwrap(), "new").unwrap();
            std::fs::write(o.file(&d.join("b.txt")).unwrap(), "new").unwrap();
        }
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["a.txt"]);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "old");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn inputs_are_refused_as_outputs_and_inside_output_directories() {
        let d = scratch("inputs");
        std::fs::write(d.join("scan.las"), "points").unwrap();
        std::fs::create_dir(d.join("out")).unwrap();
        std::fs::write(d.join("out/manifest.json"), "").unwrap();
        std::fs::write(d.join("out/axis.xodr"), "axis").unwrap();
        let o = Outputs::new([d.join("scan.las"), d.join("out/axis.xodr")]);
        let e = o.file(&d.join("./scan.las")).unwrap_err().to_string();
        assert!(e.contains("is an input of this run"), "{e}");
        let e = o.dir(&d.join("out"), "manifest.json").unwrap_err().to_string();
        assert!(e.contains("holds the input"), "{e}");
        let e = o.file(&d.join("no/such/x.crg")).unwrap_err().to_string();
        assert!(e.contains("no such directory"), "{e}");
        std::fs::write(o.file(&d.join("x.crg")).unwrap(), "").unwrap();
        let e = o.file(&d.join("x.crg")).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
        drop(o);
        assert_eq!(std::fs::read_to_string(d.join("scan.las")).unwrap(), "points");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A dead process's PID: a child that has exited and been waited for.
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    #[test]
    fn a_journal_left_by_a_dead_run_is_finished_and_an_unjournaled_staging_removed() {
        let d = scratch("recover");
        let pid = dead_pid();
        // A commit killed after moving the old directory aside, before the new one came in.
        let holder = d.join(format!("{TMP}{pid}"));
        let old = d.join(format!("{OLD}{pid}"));
        std::fs::create_dir_all(holder.join("out")).unwrap();
        std::fs::write(holder.join("out/manifest.json"), "new").unwrap();
        std::fs::write(holder.join("a.txt"), "new").unwrap();
        std::fs::create_dir_all(old.join("out")).unwrap();
        std::fs::write(old.join("out/manifest.json"), "old").unwrap();
        let j = Journal {
            targets: vec![
                Target { staged: holder.join("a.txt"), out: d.join("a.txt"), dir: false, remove: false },
                Target { staged: holder.join("out"), out: d.join("out"), dir: true, remove: false },
            ],
            holders: vec![holder.clone()],
            olds: vec![old.clone()],
        };
        std::fs::write(holder.join(JOURNAL), serde_json::to_vec(&j).unwrap()).unwrap();
        // A staging directory of another dead run, killed before its commit; and a spill.
        std::fs::create_dir_all(d.join(format!("{TMP}{pid}9")).join("x")).unwrap();
        std::fs::create_dir_all(d.join(format!("{SPILL}{pid}-0"))).unwrap();
        recover(&d);
        assert_eq!(std::fs::read_to_string(d.join("out/manifest.json")).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "new");
        let mut left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, ["a.txt", "out"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_journal_that_renames_anything_but_its_own_staged_outputs_is_ignored() {
        let d = scratch("hostile-journal");
        let pid = dead_pid();
        let holder = d.join(format!("{TMP}{pid}"));
        std::fs::create_dir_all(&holder).unwrap();
        std::fs::create_dir_all(d.join("elsewhere")).unwrap();
        std::fs::write(d.join("elsewhere/precious"), "keep").unwrap();
        let j = Journal {
            targets: vec![Target {
                staged: d.join("elsewhere/precious"),
                out: d.join("stolen"),
                dir: false,
                remove: false,
            }],
            holders: vec![holder.clone()],
            olds: vec![],
        };
        std::fs::write(holder.join(JOURNAL), serde_json::to_vec(&j).unwrap()).unwrap();
        recover(&d);
        assert_eq!(std::fs::read_to_string(d.join("elsewhere/precious")).unwrap(), "keep");
        assert!(!d.join("stolen").exists() && !holder.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_a_dead_run_was_writing_atomically_is_removed_and_a_live_ones_kept() {
        let dir = scratch("atomic-temporaries");
        let dead_one = dir.join(format!(".road.xodr{}{}", atomic::TMP_MARK, dead_pid()));
        let live_one = dir.join(format!(".road.xodr{}{}", atomic::TMP_MARK, std::process::id()));
        let plain = dir.join("road.xodr");
        for p in [&dead_one, &live_one, &plain] {
            std::fs::write(p, b"x").unwrap();
        }
        recover(&dir);
        assert!(!dead_one.exists(), "a dead run's temporary is left");
        assert!(live_one.exists() && plain.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_left_aside_without_its_output_is_put_back() {
        let d = scratch("putback");
        let pid = dead_pid();
        let old = d.join(format!("{OLD}{pid}"));
        std::fs::create_dir_all(old.join("out")).unwrap();
        std::fs::write(old.join("out/manifest.json"), "old").unwrap();
        recover(&d);
        assert_eq!(std::fs::read_to_string(d.join("out/manifest.json")).unwrap(), "old");
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["out"]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
