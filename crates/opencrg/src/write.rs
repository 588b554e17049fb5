//! Writing CRG files that the reference C-API loads with the same placement and values.
//!
//! Every block is closed by a `$!****` line (the C-API ignores a block keyword that follows
//! another block directly), `#:` is always explicit, END_U always matches the rows (binary
//! readers take the row count from it), NaN is `*missing*` in text and quiet NaN in binary, the
//! binary section is padded with NaN to a multiple of 80 bytes and written as bytes (no newline
//! conversion). A first binary value whose first byte would be CR or LF (a positive float below
//! 1e-30, which the C-API's line reader would swallow) is written as 0.

use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use std::io::Write;
use std::path::Path;

const RULE: &str = "$!**********************************************************************";

/// Writes `crg` in `format` to `out`.
pub fn write(crg: &Crg, format: Format, out: &mut impl Write) -> Result<()> {
    let nv = crg.nv();
    write_rows(crg, format, out, |iu, row| match crg.z.get(iu * nv..(iu + 1) * nv) {
        Some(z) => {
            row.copy_from_slice(z);
            Ok(())
        }
        None => Err(Error::new(ErrorKind::Write(format!(
            "the grid holds {} heights, {} x {nv} nodes need {}",
            crg.z.len(),
            crg.nu,
            crg.nu * nv
        )))),
    })
}

/// Writes `crg` with the heights of row `iu` (u index) from `row(iu, z)`, called once per row
/// in order, instead of from `crg.z` (which may be empty): grids larger than memory.
pub fn write_rows(
    crg: &Crg,
    format: Format,
    out: &mut impl Write,
    mut row: impl FnMut(usize, &mut [f32]) -> Result<()>,
) -> Result<()> {
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string()));
    // The header is ISO-8859-1: one byte per character, as it was read.
    let header: Vec<u8> = header(crg, format)?.chars().map(|c| if (c as u32) < 256 { c as u8 } else { b'?' }).collect();
    out.write_all(&header).map_err(io)?;
    let channels = &crg.channel_order;
    let mut z = vec![f32::NAN; crg.nv()];
    let value = |z: &[f32], iu: usize, ch: ChannelKind| -> f64 {
        match ch {
            ChannelKind::LongSection(iv) => z.get(iv).map_or(f64::NAN, |&v| v as f64),
            ChannelKind::Phi => crg.phi.as_ref().map_or(f64::NAN, |p| p[iu]),
            ChannelKind::Slope => crg.slope.as_ref().map_or(f64::NAN, |p| p[iu]),
            ChannelKind::Banking => crg.banking.as_ref().map_or(f64::NAN, |p| p[iu]),
            ChannelKind::X => crg.xy.as_ref().map_or(f64::NAN, |p| p.0[iu]),
            ChannelKind::Y => crg.xy.as_ref().map_or(f64::NAN, |p| p.1[iu]),
            ChannelKind::U => crg.u.as_ref().map_or(f64::NAN, |p| p[iu]),
        }
    };
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let flush = |buf: &mut Vec<u8>, out: &mut dyn Write| -> Result<()> {
        out.write_all(buf).map_err(io)?;
        buf.clear();
        Ok(())
    };
    if format.is_text() {
        let w = format.width();
        let per_line = 80 / w;
        for iu in 0..crg.nu {
            row(iu, &mut z)?;
            for (k, &ch) in channels.iter().enumerate() {
                buf.extend_from_slice(text_field(value(&z, iu, ch), w).as_bytes());
                if (k + 1).is_multiple_of(per_line) || k + 1 == channels.len() {
                    buf.push(b'\n');
                }
            }
            if buf.len() > 1 << 16 {
                flush(&mut buf, out)?;
            }
        }
    } else {
        let w = format.width();
        let row_bytes = channels.len() * w;
        let row_padded = if format.is_long() { row_bytes.div_ceil(80) * 80 } else { row_bytes };
        let mut written = 0usize;
        // How many channels from each on are long sections of consecutive columns of the grid
        // (0: not one, or outside the grid): a single-precision file's rows are mostly one such
        // run, written without the per-value dispatch below.
        let mut runs = vec![0usize; channels.len() + 1];
        for k in (0..channels.len()).rev() {
            if let ChannelKind::LongSection(iv) = channels[k] {
                let next = matches!(channels.get(k + 1), Some(&ChannelKind::LongSection(j)) if j == iv + 1);
                runs[k] = if iv < z.len() { 1 + if next { runs[k + 1] } else { 0 } } else { 0 };
            }
        }
        for iu in 0..crg.nu {
            row(iu, &mut z)?;
            let mut k = 0;
            while k < channels.len() {
                let ch = channels[k];
                // The heights of a single-precision file as they are (NaN as f32::NAN), a run of
                // consecutive columns at a time (a column outside the grid: NaN); the first
                // value of the data is handled below.
                if let (4, ChannelKind::LongSection(iv), false) = (w, ch, iu == 0 && written == 0) {
                    let run = runs[k];
                    let at = buf.len();
                    buf.resize(at + 4 * run.max(1), 0);
                    let out = buf[at..].chunks_exact_mut(4);
                    for (bytes, &f) in out.zip(z.get(iv..iv + run).unwrap_or(&[f32::NAN])) {
                        let f = if f.is_nan() { f32::NAN } else { f };
                        bytes.copy_from_slice(&f.to_be_bytes());
                    }
                    written += 4 * run.max(1);
                    k += run.max(1);
                    continue;
                }
                k += 1;
                let mut v = value(&z, iu, ch);
                if iu == 0 && written == 0 && v > 0.0 && v < 1e-30 {
                    v = 0.0;
                }
                if w == 4 {
                    let f = if v.is_nan() { f32::NAN } else { v as f32 };
                    buf.extend_from_slice(&f.to_be_bytes());
                } else {
                    buf.extend_from_slice(&v.to_be_bytes());
                }
                written += w;
            }
            for _ in 0..(row_padded - row_bytes) / w {
                nan_bytes(w, &mut buf);
                written += w;
            }
            if buf.len() > 1 << 16 {
                flush(&mut buf, out)?;
            }
        }
        while !written.is_multiple_of(80) {
            nan_bytes(w, &mut buf);
            written += w;
        }
    }
    flush(&mut buf, out)?;
    Ok(())
}

fn nan_bytes(w: usize, buf: &mut Vec<u8>) {
    if w == 4 {
        buf.extend_from_slice(&f32::NAN.to_be_bytes());
    } else {
        buf.extend_from_slice(&f64::NAN.to_be_bytes());
    }
}

/// Writes to a file atomically (temporary file, then rename).
pub fn write_file(crg: &Crg, path: impl AsRef<Path>, format: Format) -> Result<()> {
    write_atomically(path.as_ref(), |w| write(crg, format, w))
}

/// [`write_rows`] to a file, atomically: on an error from `row` no file is left.
pub fn write_file_rows(
    crg: &Crg,
    path: impl AsRef<Path>,
    format: Format,
    row: impl FnMut(usize, &mut [f32]) -> Result<()>,
) -> Result<()> {
    write_atomically(path.as_ref(), |w| write_rows(crg, format, w, row))
}

/// Runs `fill` on an [`atomic::TempFile`] beside `path`, then commits it (flush, sync, rename);
/// on any error the temporary file is removed, so no half-written file is ever left.
pub(crate) fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<()>,
) -> Result<()> {
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string())).with_path(path);
    let mut tmp = atomic::TempFile::beside(path).map_err(io)?;
    fill(tmp.writer()).map_err(|e| e.with_path(path))?;
    tmp.commit().map_err(io)
}

/// A header number: shortest text that reads back to the same f64.
fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn header(crg: &Crg, format: Format) -> Result<String> {
    let mut h = String::new();
    let mut line = |s: &str| {
        h.push_str(s);
        h.push('\n');
    };
    line("$CT");
    for c in &crg.comment {
        // A line starting with '$' would end the comment block.
        if c.starts_with('$') {
            line(&format!(" {c}"));
        } else {
            line(c);
        }
    }
    line(RULE);
    line("$ROAD_CRG");
    let r = &crg.road;
    let nu = crg.nu;
    if nu < 2 || crg.nv() < 2 {
        return Err(Error::new(ErrorKind::Write(format!(
            "a grid of {nu} x {} nodes; at least 2 x 2 are needed",
            crg.nv()
        ))));
    }
    let u0 = crg.u_first();
    let du = crg.du();
    let end_u = u0 + du * (nu - 1) as f64;
    let kv = |k: &str, v: f64| format!("{k:<26}= {}", num(v));
    let mut road_lines =
        vec![kv("REFERENCE_LINE_START_U", u0), kv("REFERENCE_LINE_END_U", end_u), kv("REFERENCE_LINE_INCREMENT", du)];
    for (k, v) in [
        ("LONG_SECTION_V_RIGHT", r.v_right),
        ("LONG_SECTION_V_LEFT", r.v_left),
        ("LONG_SECTION_V_INCREMENT", r.v_increment),
        ("REFERENCE_LINE_START_X", r.start_x),
        ("REFERENCE_LINE_START_Y", r.start_y),
        ("REFERENCE_LINE_START_PHI", r.start_phi),
        ("REFERENCE_LINE_END_X", r.end_x),
        ("REFERENCE_LINE_END_Y", r.end_y),
        ("REFERENCE_LINE_END_PHI", r.end_phi),
        ("REFERENCE_LINE_START_Z", r.start_z),
        ("REFERENCE_LINE_END_Z", r.end_z),
        ("REFERENCE_LINE_START_S", r.start_slope),
        ("REFERENCE_LINE_END_S", r.end_slope),
        ("REFERENCE_LINE_START_B", r.start_bank),
        ("REFERENCE_LINE_END_B", r.end_bank),
        ("REFERENCE_LINE_OFFSET_X", r.offset[0]),
        ("REFERENCE_LINE_OFFSET_Y", r.offset[1]),
        ("REFERENCE_LINE_OFFSET_Z", r.offset[2]),
        ("REFERENCE_LINE_OFFSET_PHI", r.offset[3]),
    ] {
        if let Some(v) = v {
            if !v.is_finite() {
                return Err(Error::new(ErrorKind::Write(format!("{k} is {v}"))));
            }
            road_lines.push(kv(k, v));
        }
    }
    for l in road_lines {
        line(&l);
    }
    for o in &r.other {
        line(o);
    }
    line(RULE);
    if let Some(o) = &crg.options {
        line("$ROAD_CRG_OPTS");
        if let Some(m) = o.border_mode_u {
            line(&format!("BORDER_MODE_U = {}", m.code()));
        }
        if let Some(m) = o.border_mode_v {
            line(&format!("BORDER_MODE_V = {}", m.code()));
        }
        for (k, v) in [
            ("BORDER_OFFSET_U", o.border_offset_u),
            ("BORDER_OFFSET_V", o.border_offset_v),
            ("BORDER_SMOOTH_UBEG", o.smooth_u_begin),
            ("BORDER_SMOOTH_UEND", o.smooth_u_end),
        ] {
            if let Some(v) = v {
                line(&format!("{k} = {}", num(v)));
            }
        }
        if let Some(c) = o.close_track {
            line(&format!("REFLINE_CONTINUATION = {}", u8::from(c)));
        }
        for (k, v) in &o.other {
            line(&format!("{} = {v}", k.to_ascii_uppercase()));
        }
        line(RULE);
    }
    if let Some(m) = &crg.modifiers {
        line("$ROAD_CRG_MODS");
        for (k, v) in m.entries() {
            if k == "GRID_NAN_MODE" {
                line(&format!("{k} = {}", v as i64));
            } else {
                line(&format!("{k} = {}", num(v)));
            }
        }
        line(RULE);
    }
    for (block, lines) in &crg.other_blocks {
        line(block);
        for l in lines {
            line(l);
        }
        line(RULE);
    }
    line("$KD_Definition");
    line(&format!("#:{}", format.tag()));
    let v = crg.v_positions();
    for ch in &crg.channel_order {
        match ch {
            ChannelKind::LongSection(i) => match &crg.long_sections {
                LongSections::Indexed(_) => line(&format!("D:long section {},m", i + 1)),
                LongSections::AtV(_) => line(&format!("D:long section at v = {},m", num(v[*i]))),
            },
            ChannelKind::Phi => line("D:reference line phi,rad"),
            ChannelKind::Slope => line("D:reference line slope,m/m"),
            ChannelKind::Banking => line("D:reference line banking,m/m"),
            ChannelKind::X => line("D:reference line x,m"),
            ChannelKind::Y => line("D:reference line y,m"),
            ChannelKind::U => line("D:reference line u,m"),
        }
    }
    line(RULE);
    line(&"$".repeat(72));
    Ok(h)
}

/// One text field of width `w` (10 or 20): a blank, then the most precise number that fits,
/// right-aligned; NaN as `*missing*`.
fn text_field(x: f64, w: usize) -> String {
    if x.is_nan() {
        return format!("{:>w$}", "*missing*");
    }
    let room = w - 1;
    let mut best: Option<(f64, String)> = None;
    let mut consider = |s: String| {
        if s.len() <= room {
            if let Ok(back) = s.parse::<f64>() {
                let err = (back - x).abs();
                if best.as_ref().is_none_or(|(e, b)| err < *e || (err == *e && s.len() < b.len())) {
                    best = Some((err, s));
                }
            }
        }
    };
    for d in 0..room {
        consider(format!("{x:.d$}"));
        consider(format!("{x:.d$e}"));
    }
    let s = best.map_or_else(|| "0".to_string(), |b| b.1);
    format!("{s:>w$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_fields_fit_and_are_precise() {
        for (x, w) in
            [(0.0111111, 10), (-1.2345678e-5, 10), (2.13159323, 10), (-233.99574, 10), (1.5e20, 10), (0.1, 20)]
        {
            let s = text_field(x, w);
            assert_eq!(s.len(), w, "{s}");
            assert!(s.starts_with(' '));
            let back: f64 = s.trim().parse().unwrap_or(f64::NAN);
            assert!((back - x).abs() <= x.abs() * 5e-4, "{x} -> {s}");
        }
        assert_eq!(text_field(f64::NAN, 10), " *missing*");
        assert_eq!(text_field(2.13159323, 10), " 2.1315932");
    }
}
