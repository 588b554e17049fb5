//! The command line's [`Progress`]: a bar per stage on a terminal, a line per finished stage,
//! notes on stderr; nothing but warnings that explain the exit code with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};
use roadscan::{Note, Progress, Stage};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Progress on stderr.
#[derive(Debug)]
pub struct Bars {
    quiet: bool,
    tty: bool,
    /// The current stage's bar (hidden when stderr is not a terminal).
    bar: Mutex<Option<ProgressBar>>,
    /// An unnumbered stage under way: what it does, its length, when its line was drawn.
    line: Mutex<Option<(String, Option<u64>, Instant)>>,
}

impl Bars {
    /// Progress for a run with `--quiet` or without.
    pub fn new(quiet: bool) -> Bars {
        Bars { quiet, tty: !quiet && std::io::stderr().is_terminal(), bar: Mutex::new(None), line: Mutex::new(None) }
    }

    /// Whether `--quiet` was given.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    fn set_bar(&self, bar: Option<ProgressBar>) {
        if let Ok(mut b) = self.bar.lock() {
            if let Some(old) = b.take() {
                old.finish_and_clear();
            }
            *b = bar;
        }
    }
}

impl Progress for Bars {
    fn stage(&self, stage: &Stage<'_>) {
        if !self.tty {
            return;
        }
        if stage.index == 0 {
            // An unnumbered stage (a verb's read or gridding): a line redrawn in place.
            if let Ok(mut l) = self.line.lock() {
                *l = Some((stage.what.to_string(), stage.len, Instant::now()));
            }
            return;
        }
        let bar = if let Some(len) = stage.len {
            let style = ProgressStyle::with_template("{prefix} [{bar:32}] {percent:>3} % {msg} (eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            ProgressBar::new(len).with_style(style)
        } else {
            let style = ProgressStyle::with_template("{prefix} {spinner} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let b = ProgressBar::new_spinner().with_style(style);
            b.enable_steady_tick(Duration::from_millis(120));
            b
        };
        bar.set_prefix(format!("[{}/{}] {}", stage.index, stage.of, stage.what));
        self.set_bar(Some(bar));
    }

    fn advance(&self, done: u64) {
        if !self.tty {
            return;
        }
        if let Some(bar) = self.bar.lock().ok().and_then(|b| b.clone()) {
            bar.set_position(done);
            return;
        }
        // An unnumbered stage: at most two lines a second.
        let Ok(mut line) = self.line.lock() else { return };
        if let Some((what, len, last)) = line.as_mut().filter(|l| l.2.elapsed() > Duration::from_millis(500)) {
            match len {
                Some(n) => {
                    eprint!("\rroadscan: {what} {:>5.1} % ({done} of {n})", 100.0 * done as f64 / (*n).max(1) as f64)
                }
                None => eprint!("\rroadscan: {what} ({done})"),
            }
            *last = Instant::now();
        }
    }

    fn stage_end(&self, stage: &Stage<'_>, seconds: Option<f64>) {
        if stage.index == 0 {
            if self.tty {
                if let Ok(mut l) = self.line.lock() {
                    *l = None;
                }
                eprint!("\r{:72}\r", "");
            }
            return;
        }
        self.set_bar(None);
        if let (Some(secs), false) = (seconds, self.quiet) {
            eprintln!("roadscan: [{}/{}] {}: {secs:.1} s", stage.index, stage.of, stage.what);
        }
    }

    fn note(&self, note: &Note) {
        if !self.quiet {
            eprintln!("roadscan: {note}");
        }
    }
}
