//! `roadscan crg-eval`: an OpenCRG file evaluated at the points read on stdin.

use crate::exit;
use anyhow::Result;
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

/// Runs `crg-eval`: reads `uv U V` / `xy X Y` lines on stdin, prints `x y u v z`.
pub fn run(path: &Path, mods: bool, opts: &[String]) -> Result<u8> {
    let s = roadscan::eval::crg_surface(path, mods, opts)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        if let Some(l) = roadscan::eval::crg_eval_line(&s, i + 1, &line?)? {
            writeln!(out, "{l}")?;
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
