//! How the library tells its caller what it is doing: stages with their progress, and notes.
//!
//! The library never prints. A program passes a [`Progress`] to the work; the command-line
//! tool draws bars and prints the notes on stderr, a test passes [`Silent`].

use anyhow::Result;
use std::fmt;
use std::time::Instant;

/// A note on the work for the user: what was assumed, estimated or left out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Note {
    /// What the work found or did (e.g. "reprojecting from A to B").
    Info(String),
    /// What may be wrong with the inputs or the products (e.g. a file without a CRS).
    Warning(String),
}

impl fmt::Display for Note {
    /// The text of a note; a warning's begins with "warning: ".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Info(t) => f.write_str(t),
            Note::Warning(t) => write!(f, "warning: {t}"),
        }
    }
}

/// A stage of a long piece of work.
#[derive(Debug, Clone, Copy)]
pub struct Stage<'a> {
    /// Its number, from 1.
    pub index: usize,
    /// Stages in the whole work (0 when unknown).
    pub of: usize,
    /// What it does.
    pub what: &'a str,
    /// Its length in steps ([`Progress::advance`] counts up to it); None: unknown.
    pub len: Option<u64>,
}

/// Receives the progress of the work. Every method has a default that does nothing; methods
/// take `&self` and may be called from the work's threads.
pub trait Progress: Sync {
    /// A stage begins.
    fn stage(&self, _stage: &Stage<'_>) {}
    /// The current stage has done this many of its steps.
    fn advance(&self, _done: u64) {}
    /// The current stage ended: after `seconds` (None: it failed).
    fn stage_end(&self, _stage: &Stage<'_>, _seconds: Option<f64>) {}
    /// A note for the user.
    fn note(&self, _note: &Note) {}
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {}

/// The stages of one piece of work, numbered, timed and reported to a [`Progress`].
pub(crate) struct Stages<'p> {
    progress: &'p dyn Progress,
    /// Stages in the whole work (may grow while it runs).
    pub n: usize,
    k: usize,
    /// Each stage run: what it did and its seconds.
    pub times: Vec<(String, f64)>,
}

impl<'p> Stages<'p> {
    /// `n` stages to come, reported to `progress`.
    pub fn new(n: usize, progress: &'p dyn Progress) -> Stages<'p> {
        Stages { progress, n, k: 0, times: Vec::new() }
    }

    /// `n` stages of which the first `done` have run elsewhere (their names and seconds).
    pub fn after(n: usize, done: Vec<(String, f64)>, progress: &'p dyn Progress) -> Stages<'p> {
        Stages { progress, n, k: done.len(), times: done }
    }

    /// The progress the stages report to.
    pub fn progress(&self) -> &'p dyn Progress {
        self.progress
    }

    /// Runs stage `what` of `len` steps (None: unknown); `f` reports its steps to the
    /// progress it is given.
    pub fn run<T>(&mut self, what: &str, len: Option<u64>, f: impl FnOnce(&'p dyn Progress) -> Result<T>) -> Result<T> {
        self.k += 1;
        let stage = Stage { index: self.k, of: self.n, what, len };
        self.progress.stage(&stage);
        let t = Instant::now();
        let result = f(self.progress);
        let secs = t.elapsed().as_secs_f64();
        self.progress.stage_end(&stage, result.is_ok().then_some(secs));
        self.times.push((what.to_string(), secs));
        result
    }
}
