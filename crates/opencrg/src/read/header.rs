//! The text header of a CRG file: its blocks in the C-API's matching order, walked line by
//! line (includes followed, environment variables expanded), each `$ROAD_CRG`, `$KD_Definition`,
//! `$ROAD_CRG_OPTS` and `$ROAD_CRG_MODS` line read into the accumulator, and the data section
//! handed to the decoder after the `$$$$` separator.

use super::accumulate::{Accumulator, Def};
use super::data::read_data;
use super::lex::{
    find_token, header_err, header_number, latin1, next_line, number_prefix, show, starts_with_ci, value_of,
};
use super::{load, Origin, ReadOptions, MIN_INCREMENT};
use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Section {
    None,
    Comment,
    Road,
    DataDef,
    Options,
    Mods,
    File,
    Other,
}

/// Block keywords in the C-API's matching order (prefix, case-insensitive).
fn block_of(line: &str) -> Option<Section> {
    let t = line.trim_start_matches(' ');
    let up = |p: &str| t.len() >= p.len() && t.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    if up("$ROAD_CRG_MODS") {
        Some(Section::Mods)
    } else if up("$ROAD_CRG_OPTS") {
        Some(Section::Options)
    } else if up("$ROAD_CRG_FILE") {
        Some(Section::File)
    } else if up("$ROAD_CRG_MPRO") {
        // Read as $ROAD_CRG by the C-API (prefix match) with unknown keys: kept verbatim here.
        Some(Section::Other)
    } else if up("$ROAD_CRG") {
        Some(Section::Road)
    } else if up("$CT") {
        Some(Section::Comment)
    } else if up("$KD_DEFINITION") {
        Some(Section::DataDef)
    } else {
        None
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn parse(
    bytes: &[u8],
    path: Option<&Path>,
    level: usize,
    dir: Option<&Path>,
    options: &ReadOptions,
    stack: &mut Vec<PathBuf>,
    acc: &mut Accumulator,
) -> Result<()> {
    let includer = path;
    let mut rest = bytes;
    let mut line_no = 0usize;
    let mut section = Section::None;
    let mut include_name = String::new();
    let mut include_line = 0;
    let mut other_block: Option<(String, Vec<String>)> = None;
    while !rest.is_empty() {
        let (raw, after) = next_line(rest);
        let offset = bytes.len() - rest.len();
        rest = after;
        line_no += 1;
        let line = latin1(raw);
        let trimmed = line.trim_start_matches(' ');
        if line.starts_with("$$$$") {
            if let Some(b) = other_block.take() {
                acc.other_blocks.push(b);
            }
            let data_start = offset + raw.len() + (bytes.len() - offset - raw.len() - rest.len());
            acc.data_origin = Some(Origin { path: path.map(Path::to_path_buf), line: line_no });
            return read_data(bytes, data_start, line_no, acc);
        }
        if section == Section::Comment {
            if line.starts_with('$') {
                section = Section::None;
            } else {
                if level == 0 {
                    acc.comment.push(line.clone());
                }
                continue;
            }
        }
        if section == Section::File {
            if trimmed.starts_with('*') || trimmed.is_empty() {
                continue;
            }
            if line.starts_with('$') {
                let name = include_name.trim().to_string();
                if name.is_empty() {
                    return Err(header_err(line_no, "$ROAD_CRG_FILE block names no file".into()));
                }
                let name = expand_env(&name);
                let path = match dir {
                    Some(d) if Path::new(&name).is_relative() => d.join(&name),
                    _ => PathBuf::from(&name),
                };
                include_name.clear();
                let statement = std::mem::take(&mut include_line);
                if !path.is_file() {
                    return Err(header_err(
                        statement,
                        format!("$ROAD_CRG_FILE names {}, which does not exist", path.display()),
                    ));
                }
                load(&path, Some((includer, statement)), options, stack, acc)?;
                section = Section::None;
            } else {
                // The C-API takes each line up to a blank or '!' and concatenates.
                let part: String = trimmed.chars().take_while(|&c| c != ' ' && c != '!').collect();
                include_name.push_str(&part);
                if include_line == 0 {
                    include_line = line_no;
                }
                continue;
            }
        }
        if trimmed.starts_with('*') || trimmed.is_empty() {
            continue;
        }
        if line.starts_with('$') {
            // A '$' line ends the block; a block keyword starts the next one.
            if let Some(b) = other_block.take() {
                acc.other_blocks.push(b);
            }
            section = block_of(&line).unwrap_or(Section::None);
            match section {
                Section::Options if level == 0 || acc.options.is_none() => {
                    acc.options = Some((level, Options::default()));
                }
                Section::Mods if level == 0 || acc.modifiers.is_none() => {
                    acc.modifiers = Some((level, Modifiers::default()));
                }
                Section::Other => other_block = Some((line.trim_end().to_string(), Vec::new())),
                _ => {}
            }
            continue;
        }
        match section {
            Section::Road => {
                if let Some(key) = road_line(&line, line_no, &mut acc.road)? {
                    let origin = Origin { path: path.map(Path::to_path_buf), line: line_no };
                    acc.key_origin.retain(|(k, _)| *k != key);
                    acc.key_origin.push((key, origin));
                }
            }
            Section::DataDef => def_line(&line, path, line_no, acc)?,
            Section::Options => {
                if let Some((lvl, o)) = &mut acc.options {
                    if *lvl == level {
                        option_line(&line, line_no, o)?;
                    }
                }
            }
            Section::Mods => {
                if let Some((lvl, m)) = &mut acc.modifiers {
                    if *lvl == level {
                        modifier_line(&line, line_no, m)?;
                    }
                }
            }
            Section::Other => {
                if let Some((_, lines)) = &mut other_block {
                    lines.push(line.clone());
                }
            }
            // Outside blocks the C-API warns and goes on; so do we (check reports it).
            _ => {}
        }
    }
    if let Some(b) = other_block.take() {
        acc.other_blocks.push(b);
    }
    if acc.data.is_none() && level == 0 {
        return Err(Error::at_line(ErrorKind::NoDataSection, line_no));
    }
    Ok(())
}

fn expand_env(name: &str) -> String {
    // `$VAR/...` segments are replaced by the environment variable, as the C-API does.
    let mut out = String::new();
    for (i, part) in name.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        match part.strip_prefix('$') {
            Some(var) => out.push_str(&std::env::var(var).unwrap_or_default()),
            None => out.push_str(part),
        }
    }
    out
}

/// One `$ROAD_CRG` line; returns the key it set, if it is one of the C-API's.
fn road_line(line: &str, line_no: usize, r: &mut RoadParams) -> Result<Option<&'static str>> {
    let t = line.trim_start_matches(' ');
    // Order matters: the C-API matches keys as prefixes, in this order.
    let keys: [(&str, &mut Option<f64>); 18] = [
        ("reference_line_start_u", &mut r.start_u),
        ("reference_line_start_x", &mut r.start_x),
        ("reference_line_start_y", &mut r.start_y),
        ("reference_line_start_z", &mut r.start_z),
        ("reference_line_start_phi", &mut r.start_phi),
        ("reference_line_start_b", &mut r.start_bank),
        ("reference_line_start_s", &mut r.start_slope),
        ("reference_line_end_u", &mut r.end_u),
        ("reference_line_end_x", &mut r.end_x),
        ("reference_line_end_y", &mut r.end_y),
        ("reference_line_end_z", &mut r.end_z),
        ("reference_line_end_phi", &mut r.end_phi),
        ("reference_line_end_b", &mut r.end_bank),
        ("reference_line_end_s", &mut r.end_slope),
        ("reference_line_increment", &mut r.increment),
        ("long_section_v_right", &mut r.v_right),
        ("long_section_v_left", &mut r.v_left),
        ("long_section_v_increment", &mut r.v_increment),
    ];
    for (key, slot) in keys {
        if starts_with_ci(t, key) {
            let v = value_of(t).ok_or_else(|| header_err(line_no, format!("{key} has no '=' value")))?;
            let x = header_number(key, v, line_no)?;
            if key.ends_with("increment") && x < MIN_INCREMENT {
                let text = v.split('!').next().unwrap_or("").trim().to_string();
                return Err(Error::at_line(
                    ErrorKind::HeaderValue {
                        key: key.to_ascii_uppercase(),
                        text,
                        problem: format!("an increment must be at least {} m", show(MIN_INCREMENT)),
                    },
                    line_no,
                ));
            }
            *slot = Some(x);
            return Ok(Some(key));
        }
    }
    for (i, key) in
        ["reference_line_offset_x", "reference_line_offset_y", "reference_line_offset_z", "reference_line_offset_phi"]
            .into_iter()
            .enumerate()
    {
        if starts_with_ci(t, key) {
            let v = value_of(t).ok_or_else(|| header_err(line_no, format!("{key} has no '=' value")))?;
            r.offset[i] = Some(header_number(key, v, line_no)?);
            return Ok(Some(key));
        }
    }
    r.other.push(line.to_string());
    Ok(None)
}

fn def_line(line: &str, path: Option<&Path>, line_no: usize, acc: &mut Accumulator) -> Result<()> {
    let origin = Origin { path: path.map(Path::to_path_buf), line: line_no };
    let t = line.trim_start_matches(' ');
    if starts_with_ci(t, "#:") {
        let tag: String = t[2..].chars().take(4).collect();
        let f = Format::from_tag(&tag).ok_or_else(|| {
            Error::at_line(
                ErrorKind::Format(format!("unknown tag #:{tag} (LRFI, LDFI, KRBI, KDBI, LRBI or LDBI)")),
                line_no,
            )
        })?;
        acc.format = Some(f);
        return Ok(());
    }
    if starts_with_ci(t, "U:") {
        acc.u_line = Some(line.trim_end().to_string());
        return Ok(());
    }
    if !starts_with_ci(t, "D:") {
        return Ok(()); // other lines in the block: ignored, as by the C-API
    }
    let body = &t[2..];
    let bad = |what: &str| header_err(line_no, format!("cannot read channel definition '{}': {what}", line.trim_end()));
    if let Some(after) = find_token(body, "long section") {
        let (is_pos, num_text) = match find_token(after, "at v ") {
            Some(a) => (true, find_token(a, "=").ok_or_else(|| bad("no '=' after 'at v'"))?),
            None => (false, after),
        };
        // The C-API takes atof (0 for no number); a position or number that is not a finite
        // number is an error here.
        let pos = match number_prefix(num_text) {
            Some((x, _)) if x.is_finite() => x,
            _ => {
                let what = if is_pos { "the v position" } else { "the long section number" };
                return Err(bad(&format!("{what} is not a finite number")));
            }
        };
        let unit = find_token(num_text, ",").ok_or_else(|| bad("no ',' before the unit"))?;
        if !unit.starts_with('m') {
            return Err(bad("the unit must be m"));
        }
        acc.defs.push((origin, if is_pos { Def::LongAtV(pos) } else { Def::LongIndex(pos) }));
        return Ok(());
    }
    let Some(after) = find_token(body, "reference line") else {
        return Err(bad("neither a long section nor a reference line channel"));
    };
    // Same search order as the C-API (substring tokens).
    let candidates = [
        ("x", ChannelKind::X, "m"),
        ("y", ChannelKind::Y, "m"),
        ("u", ChannelKind::U, "m"),
        ("phi", ChannelKind::Phi, "rad"),
        ("banking", ChannelKind::Banking, "m/m"),
        ("slope", ChannelKind::Slope, "m/m"),
    ];
    for (token, kind, unit) in candidates {
        if let Some(rest) = find_token(after, token) {
            let u = find_token(rest, ",").ok_or_else(|| bad("no ',' before the unit"))?;
            if find_token(u, unit).is_none() {
                return Err(bad(&format!("the unit must be {unit}")));
            }
            acc.defs.push((origin, Def::Kind(kind)));
            return Ok(());
        }
    }
    Err(bad("unknown reference line channel"))
}

fn option_line(line: &str, line_no: usize, o: &mut Options) -> Result<()> {
    let t = line.trim_start_matches(' ');
    let Some(val) = value_of(t) else { return Ok(()) };
    let key: String =
        t.chars().take_while(|c| !c.is_whitespace() && *c != '=').collect::<String>().to_ascii_lowercase();
    let number = || header_number(&key, val, line_no);
    let mode = || {
        let code = number()? as i64;
        BorderMode::from_code(code)
            .ok_or_else(|| header_err(line_no, format!("{key} = {} is not a border mode 0..4", val.trim())))
    };
    // Smoothing lengths must not be negative (the C-API's crgCheckOpts).
    let length = || {
        let x = number()?;
        if x < 0.0 {
            return Err(Error::at_line(
                ErrorKind::HeaderValue {
                    key: key.to_ascii_uppercase(),
                    text: val.split('!').next().unwrap_or("").trim().to_string(),
                    problem: "a smoothing length cannot be negative".into(),
                },
                line_no,
            ));
        }
        Ok(x)
    };
    match key.as_str() {
        "border_mode_u" => o.border_mode_u = Some(mode()?),
        "border_mode_v" => o.border_mode_v = Some(mode()?),
        "border_offset_u" => o.border_offset_u = Some(number()?),
        "border_offset_v" => o.border_offset_v = Some(number()?),
        "border_smooth_ubeg" => o.smooth_u_begin = Some(length()?),
        "border_smooth_uend" => o.smooth_u_end = Some(length()?),
        "refline_continuation" => match number()? as i64 {
            0 => o.close_track = Some(false),
            1 => o.close_track = Some(true),
            other => return Err(header_err(line_no, format!("refline_continuation = {other} (0 or 1)"))),
        },
        _ => o.other.push((key, val.split('!').next().unwrap_or("").trim().to_string())),
    }
    Ok(())
}

fn modifier_line(line: &str, line_no: usize, m: &mut Modifiers) -> Result<()> {
    let t = line.trim_start_matches(' ');
    let Some(val) = value_of(t) else { return Ok(()) };
    let key: String =
        t.chars().take_while(|c| !c.is_whitespace() && *c != '=').collect::<String>().to_ascii_lowercase();
    let slot = match key.as_str() {
        "scale_z_grid" => &mut m.scale_z_grid,
        "scale_slope" => &mut m.scale_slope,
        "scale_banking" => &mut m.scale_banking,
        "scale_length" => &mut m.scale_length,
        "scale_width" => &mut m.scale_width,
        "scale_curvature" => &mut m.scale_curvature,
        "grid_nan_mode" => {
            m.grid_nan_mode = Some(header_number(&key, val, line_no)? as i64);
            return Ok(());
        }
        "grid_nan_offset" => &mut m.grid_nan_offset,
        "refline_rotcenter_x" => &mut m.refline_rotcenter_x,
        "refline_rotcenter_y" => &mut m.refline_rotcenter_y,
        "refline_offset_phi" => &mut m.refline_offset_phi,
        "refline_offset_x" => &mut m.refline_offset_x,
        "refline_offset_y" => &mut m.refline_offset_y,
        "refline_offset_z" => &mut m.refline_offset_z,
        "refpoint_u_fraction" => &mut m.refpoint_u_fraction,
        "refpoint_u_offset" => &mut m.refpoint_u_offset,
        "refpoint_u" => &mut m.refpoint_u,
        "refpoint_v_fraction" => &mut m.refpoint_v_fraction,
        "refpoint_v_offset" => &mut m.refpoint_v_offset,
        "refpoint_v" => &mut m.refpoint_v,
        "refpoint_x" => &mut m.refpoint_x,
        "refpoint_y" => &mut m.refpoint_y,
        "refpoint_z" => &mut m.refpoint_z,
        "refpoint_phi" => &mut m.refpoint_phi,
        other => return Err(header_err(line_no, format!("unknown modifier {other}"))),
    };
    // Every modifier is a number; none may be NaN or infinite (it would poison every value).
    *slot = Some(header_number(&key, val, line_no)?);
    Ok(())
}
