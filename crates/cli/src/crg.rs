//! The OpenCRG verbs.

use crate::exit;
use anyhow::{bail, Context, Result};
use opencrg::{BorderMode, Crg, Surface};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

fn read(path: &Path) -> Result<Crg> {
    Ok(opencrg::read_file(path)?)
}

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

pub fn info(path: &Path, json: bool) -> Result<u8> {
    let crg = read(path)?;
    let s = Surface::new(&crg, false)?;
    let (u0, u1) = s.u_range();
    let (v0, v1) = s.v_range();
    let (x, y) = s.reference_line();
    let n = x.len();
    let nan = crg.z.iter().filter(|z| z.is_nan()).count();
    let (zmin, zmax) = crg
        .z
        .iter()
        .filter(|z| !z.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &z| (a.min(z), b.max(z)));
    let mut out = BufWriter::new(std::io::stdout().lock());
    let vpos = crg.v_positions();
    if json {
        writeln!(
            out,
            "{{\"file\": {}, \"format\": \"{}\", \"nu\": {}, \"nv\": {}, \"u_range\": [{u0}, {u1}], \"du\": {}, \"v_range\": [{v0}, {v1}], \"v_first\": {}, \"v_last\": {}, \"start\": [{}, {}], \"end\": [{}, {}], \"z_min\": {zmin}, \"z_max\": {zmax}, \"start_z\": {}, \"nan_nodes\": {nan}, \"closed\": {}, \"modifiers_block\": {}}}",
            roadscan::json_str(&path.display().to_string()),
            crg.format.tag(),
            crg.nu,
            crg.nv(),
            crg.du(),
            vpos[0],
            vpos[vpos.len() - 1],
            x[0],
            y[0],
            x[n - 1],
            y[n - 1],
            crg.road.start_z.map_or("null".to_string(), |z| z.to_string()),
            s.is_closed(),
            crg.modifiers.is_some()
        )?;
    } else {
        writeln!(out, "{}: OpenCRG {} grid, {} x {} nodes", path.display(), crg.format.tag(), crg.nu, crg.nv())?;
        writeln!(
            out,
            "  u {u0} .. {u1} m (du {} m), v {} .. {} m ({} long sections)",
            crg.du(),
            vpos[0],
            vpos[vpos.len() - 1],
            crg.nv()
        )?;
        writeln!(
            out,
            "  reference line: ({:.4}, {:.4}) -> ({:.4}, {:.4}){}",
            x[0],
            y[0],
            x[n - 1],
            y[n - 1],
            if s.is_closed() { ", closed track" } else { "" }
        )?;
        writeln!(
            out,
            "  channels: {}{}{}",
            if crg.phi.is_some() { "heading " } else { "straight " },
            if crg.slope.is_some() { "slope " } else { "" },
            if crg.banking.is_some() { "banking" } else { "" }
        )?;
        writeln!(
            out,
            "  z {zmin:.4} .. {zmax:.4} m{}, {nan} of {} nodes without data",
            crg.road.start_z.map(|z| format!(" above the reference line's start z {z}")).unwrap_or_default(),
            crg.z.len()
        )?;
        writeln!(
            out,
            "  modifiers: {}",
            match &crg.modifiers {
                None => "no $ROAD_CRG_MODS block (C-API readers that apply modifiers move the grid to the origin)",
                Some(m) if m.entries().is_empty() => "empty block (placement kept, NaN kept)",
                Some(_) => "block present",
            }
        )?;
    }
    out.flush()?;
    Ok(exit::OK)
}

/// Reads `uv U V` / `xy X Y` lines on stdin, prints `x y u v z`.
pub fn eval(path: &Path, mods: bool, opts: &[String]) -> Result<u8> {
    let mut s = Surface::from_owned(read(path)?, mods)?;
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

pub fn check(path: &Path, json: bool) -> Result<u8> {
    let crg = read(path)?;
    let diags = opencrg::check::check(&crg);
    let n_err = diags.iter().filter(|d| d.severity == opencrg::check::Severity::Error).count();
    let n_warn = diags.iter().filter(|d| d.severity == opencrg::check::Severity::Warning).count();
    let mut out = BufWriter::new(std::io::stdout().lock());
    if json {
        writeln!(
            out,
            "{{\"file\": {}, \"errors\": {n_err}, \"warnings\": {n_warn}, \"diagnostics\": [",
            roadscan::json_str(&path.display().to_string())
        )?;
        for (i, d) in diags.iter().enumerate() {
            let sev = format!("{:?}", d.severity).to_ascii_lowercase();
            let comma = if i + 1 < diags.len() { "," } else { "" };
            writeln!(
                out,
                "  {{\"severity\": \"{sev}\", \"u\": {}, \"message\": {}}}{comma}",
                d.u.map_or("null".into(), |u| u.to_string()),
                roadscan::json_str(&d.message)
            )?;
        }
        writeln!(out, "]}}")?;
    } else {
        writeln!(out, "{}: OpenCRG {}, {} x {} nodes", path.display(), crg.format.tag(), crg.nu, crg.nv())?;
        for d in &diags {
            writeln!(out, "  {d}")?;
        }
        writeln!(out, "  {n_err} errors, {n_warn} warnings")?;
    }
    out.flush()?;
    Ok(if n_err > 0 { exit::FINDINGS } else { exit::OK })
}

pub fn convert(input: &Path, output: &Path, format: &str, quiet: bool) -> Result<u8> {
    let Some(format) = opencrg::Format::from_tag(format) else {
        bail!("--format must be KRBI, KDBI, LRFI, LDFI, LRBI or LDBI, got {format}");
    };
    let outputs = roadscan::staging::Outputs::new([input]);
    let staged = outputs.file(roadscan::staging::with_extension("the output", output, &["crg"])?)?;
    let crg = read(input)?;
    opencrg::write_file(&crg, &staged, format)?;
    outputs.commit()?;
    if !quiet {
        eprintln!("roadscan: wrote {} ({}, {} x {} nodes)", output.display(), format.tag(), crg.nu, crg.nv());
    }
    Ok(exit::OK)
}

pub fn render(path: &Path, out: &Path, relative: &str, range_mm: Option<f64>, quiet: bool) -> Result<u8> {
    use opencrg::render::{Relative, RenderOptions};
    let relative = match relative {
        "plane" => Relative::FittedPlane,
        "refline" => Relative::ReferenceLine,
        other => bail!("--relative must be plane or refline, got {other}"),
    };
    if let Some(r) = range_mm {
        if !(r.is_finite() && r > 0.0) {
            bail!("--range-mm must be a positive number, got {r}");
        }
    }
    let outputs = roadscan::staging::Outputs::new([path]);
    let staged = outputs.file(roadscan::staging::with_extension("--out", out, &["png"])?)?;
    let crg = read(path)?;
    let title = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let opts = RenderOptions { relative, range: range_mm.map(|r| r / 1000.0), title, ..Default::default() };
    let info = opencrg::render::render(&crg, &staged, &opts)?;
    outputs.commit()?;
    if !quiet {
        eprintln!(
            "roadscan: wrote {} ({} x {} px, colour range +-{:.1} mm{})",
            out.display(),
            info.width,
            info.height,
            info.range * 1000.0,
            if info.downsample > 1 { format!(", downsampled 1:{}", info.downsample) } else { String::new() }
        );
    }
    Ok(exit::OK)
}
