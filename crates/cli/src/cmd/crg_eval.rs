//! `roadscan crg-eval`: an OpenCRG file evaluated at points read on stdin, as the OpenCRG
//! C-API evaluates it.

use crate::exit;
use anyhow::{bail, Context, Result};
use opencrg::{BorderMode, Surface};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

/// Parses `key=value` evaluation options (the `$ROAD_CRG_OPTS` keywords).
pub fn apply_options(surface: &mut Surface, opts: &[String]) -> Result<()> {
    for o in opts {
        let Some((k, v)) = o.split_once('=') else { bail!("--opt takes KEY=VALUE, got {o}") };
        let k = k.trim().to_ascii_lowercase();
        let num: f64 = v.trim().parse().with_context(|| format!("--opt {k}: '{v}' is not a number"))?;
        let mode =
            || BorderMode::from_code(num as i64).with_context(|| format!("--opt {k}={v}: border modes are 0..4"));
        let e = &mut surface.options;
        match k.as_str() {
            "border_mode_u" => e.border_mode_u = mode()?,
            "border_mode_v" => e.border_mode_v = mode()?,
            "border_offset_u" => e.border_offset_u = Some(num),
            "border_offset_v" => e.border_offset_v = Some(num),
            "border_smooth_ubeg" => e.smooth_u_begin = Some(num).filter(|&x| x != 0.0),
            "border_smooth_uend" => e.smooth_u_end = Some(num).filter(|&x| x != 0.0),
            "refline_continuation" => e.close_track = num != 0.0,
            "curv_mode" => e.curvature_lateral = num == 0.0,
            _ => bail!("--opt {k}: unknown option (border_mode_u/v, border_offset_u/v, border_smooth_ubeg/uend, refline_continuation, curv_mode)"),
        }
    }
    Ok(())
}

/// Reads `uv U V` / `xy X Y` lines on stdin, prints `x y u v z`.
/// Runs `crg-eval`.
pub fn run(path: &Path, mods: bool, opts: &[String]) -> Result<u8> {
    let mut s = Surface::from_owned(opencrg::read_file(path)?, mods)?;
    apply_options(&mut s, opts)?;
    let stdin = std::io::stdin();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let fmt = |x: f64| if x.is_nan() { "nan".to_string() } else { format!("{x:.12e}") };
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut it = t.split_whitespace();
        let kind = it.next().unwrap_or_default();
        let a: f64 = it
            .next()
            .and_then(|x| x.parse().ok())
            .with_context(|| format!("stdin line {}: expected 'uv U V' or 'xy X Y'", i + 1))?;
        let b: f64 = it
            .next()
            .and_then(|x| x.parse().ok())
            .with_context(|| format!("stdin line {}: expected 'uv U V' or 'xy X Y'", i + 1))?;
        let (x, y, u, v) = match kind {
            "uv" => {
                let (x, y) = s.uv_to_xy(a, b);
                (x, y, a, b)
            }
            "xy" => {
                let (u, v) = s.xy_to_uv(a, b);
                (a, b, u, v)
            }
            _ => bail!("stdin line {}: expected 'uv U V' or 'xy X Y', got '{t}'", i + 1),
        };
        let z = s.uv_to_z(u, v).map_or("err".to_string(), fmt);
        writeln!(out, "{} {} {} {} {z}", fmt(x), fmt(y), fmt(u), fmt(v))?;
    }
    out.flush()?;
    Ok(exit::OK)
}
