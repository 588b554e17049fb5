//! Reading CRG files: the text header (blocks and keys as the reference C-API recognises them)
//! and the data section in all six formats.
//!
//! Where the C-API is lenient in ways that misread data we are strict and say why: an unknown
//! `D:` channel or `#:` tag, a binary data section shorter than the header says (never read
//! past the end), END_U that disagrees with the rows of a text file, a declared size larger than
//! the file (nothing is allocated for it), include loops.

use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use std::path::{Path, PathBuf};

/// Options for [`read_with`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Directory against which `$ROAD_CRG_FILE` names are resolved; default: the including
    /// file's directory (the C-API uses the process's working directory).
    pub include_dir: Option<PathBuf>,
}

/// Reads a CRG file.
pub fn read_file(path: impl AsRef<Path>) -> Result<Crg> {
    read_with(path.as_ref(), &ReadOptions::default())
}

/// Reads a CRG file with options.
pub fn read_with(path: &Path, options: &ReadOptions) -> Result<Crg> {
    let mut stack = Vec::new();
    let mut acc = Accumulator::default();
    load(path, options, &mut stack, &mut acc)?;
    acc.finish().map_err(|e| e.with_path(path))
}

/// Parses CRG bytes that have no `$ROAD_CRG_FILE` include.
pub fn read_bytes(bytes: &[u8]) -> Result<Crg> {
    let mut acc = Accumulator::default();
    parse(bytes, 0, None, &ReadOptions::default(), &mut Vec::new(), &mut acc)?;
    acc.finish()
}

const MAX_INCLUDE_DEPTH: usize = 8;

fn load(path: &Path, options: &ReadOptions, stack: &mut Vec<PathBuf>, acc: &mut Accumulator) -> Result<()> {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) || stack.len() >= MAX_INCLUDE_DEPTH {
        let chain: Vec<String> =
            stack.iter().chain(std::iter::once(&canonical)).map(|p| p.display().to_string()).collect();
        return Err(Error::new(ErrorKind::IncludeLoop(chain.join(" -> "))).with_path(path));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::new(ErrorKind::Io(e.to_string())).with_path(path))?;
    stack.push(canonical);
    let level = stack.len() - 1;
    let dir = options.include_dir.clone().or_else(|| path.parent().map(Path::to_path_buf));
    let r = parse(&bytes, level, dir.as_deref(), options, stack, acc).map_err(|e| e.with_path(path));
    stack.pop();
    r
}

/// What the blocks of the top file and its includes add up to.
#[derive(Default)]
struct Accumulator {
    comment: Vec<String>,
    road: RoadParams,
    /// (file level that set them, options)
    options: Option<(usize, Options)>,
    modifiers: Option<(usize, Modifiers)>,
    other_blocks: Vec<(String, Vec<String>)>,
    format: Option<Format>,
    u_line: Option<String>,
    /// (line, definition) in file order
    defs: Vec<(usize, Def)>,
    data: Option<Data>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Def {
    LongIndex(f64),
    LongAtV(f64),
    Kind(ChannelKind),
}

struct Data {
    /// Long-section values, row-major `rows x nv`, in ascending long-section order.
    z: Vec<f32>,
    /// The other channels: (file column, values per row).
    other: Vec<(usize, Vec<f64>)>,
    rows: usize,
}

/// Where each file column goes while decoding.
struct Sink {
    /// Per column: `Ok(iv)` a long section, `Err(k)` the k-th other channel.
    slot: Vec<std::result::Result<usize, usize>>,
    nv: usize,
    z: Vec<f32>,
    other: Vec<(usize, Vec<f64>)>,
}

impl Sink {
    fn new(defs: &[(usize, Def)], rows_hint: usize) -> Sink {
        let mut longs: Vec<(f64, usize)> = defs
            .iter()
            .enumerate()
            .filter_map(|(col, (_, d))| match d {
                Def::LongIndex(x) | Def::LongAtV(x) => Some((*x, col)),
                Def::Kind(_) => None,
            })
            .collect();
        longs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut slot = vec![Err(0); defs.len()];
        for (iv, (_, col)) in longs.iter().enumerate() {
            slot[*col] = Ok(iv);
        }
        let mut other = Vec::new();
        for (col, (_, d)) in defs.iter().enumerate() {
            if let Def::Kind(_) = d {
                slot[col] = Err(other.len());
                other.push((col, Vec::with_capacity(rows_hint)));
            }
        }
        let nv = longs.len();
        Sink { slot, nv, z: Vec::with_capacity(rows_hint.saturating_mul(nv)), other }
    }
    fn start_row(&mut self) {
        self.z.extend(std::iter::repeat_n(f32::NAN, self.nv));
    }
    #[inline]
    fn put(&mut self, col: usize, value: f64) {
        match self.slot[col] {
            Ok(iv) => {
                let base = self.z.len() - self.nv;
                self.z[base + iv] = if value.is_nan() { f32::NAN } else { value as f32 };
            }
            Err(k) => self.other[k].1.push(value),
        }
    }
    fn finish(self, rows: usize) -> Data {
        Data { z: self.z, other: self.other, rows }
    }
}

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

/// Splits off one line (LF, CR or CRLF); returns (line, rest).
fn next_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n' || b == b'\r') {
        Some(i) => {
            let mut j = i + 1;
            if data[i] == b'\r' && data.get(j) == Some(&b'\n') {
                j += 1;
            }
            (&data[..i], &data[j..])
        }
        None => (data, &[]),
    }
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

/// C `atof`: the longest numeric prefix after blanks; 0 when there is none.
pub(crate) fn atof(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return 0.0;
    }
    let mut end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let k = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > k {
            end = j;
        }
    }
    s[start..end].parse().unwrap_or(0.0)
}

/// C `atoi` of the text after '='.
fn atoi(s: &str) -> i64 {
    atof(s) as i64
}

/// The value after the first '=' (the C-API's `strchr(buffer, '=')` + atof).
fn value_of(line: &str) -> Option<&str> {
    line.find('=').map(|i| &line[i + 1..])
}

fn starts_with_ci(s: &str, p: &str) -> bool {
    s.len() >= p.len() && s.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
}

/// The C-API's findToken: the text after the first case-insensitive occurrence of `token`
/// before any '!'.
fn find_token<'a>(hay: &'a str, token: &str) -> Option<&'a str> {
    let hay = hay.trim_start_matches(' ');
    let end = hay.find('!').unwrap_or(hay.len());
    let mut i = 0;
    while i < end {
        if starts_with_ci(&hay[i..], token) {
            return Some(&hay[i + token.len()..]);
        }
        i += hay[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn header_err(line: usize, msg: String) -> Error {
    Error::at_line(ErrorKind::Header(msg), line)
}

fn parse(
    bytes: &[u8],
    level: usize,
    dir: Option<&Path>,
    options: &ReadOptions,
    stack: &mut Vec<PathBuf>,
    acc: &mut Accumulator,
) -> Result<()> {
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
            return read_data(bytes, data_start, acc);
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
                if !path.is_file() {
                    return Err(header_err(
                        include_line,
                        format!("$ROAD_CRG_FILE names {}, which does not exist", path.display()),
                    ));
                }
                load(&path, options, stack, acc)?;
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
            Section::Road => road_line(&line, line_no, &mut acc.road)?,
            Section::DataDef => def_line(&line, line_no, acc)?,
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
        return Err(Error::new(ErrorKind::NoDataSection));
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

fn road_line(line: &str, line_no: usize, r: &mut RoadParams) -> Result<()> {
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
            *slot = Some(atof(v));
            return Ok(());
        }
    }
    for (i, key) in
        ["reference_line_offset_x", "reference_line_offset_y", "reference_line_offset_z", "reference_line_offset_phi"]
            .iter()
            .enumerate()
    {
        if starts_with_ci(t, key) {
            r.offset[i] = value_of(t).map(atof);
            return Ok(());
        }
    }
    r.other.push(line.to_string());
    Ok(())
}

fn def_line(line: &str, line_no: usize, acc: &mut Accumulator) -> Result<()> {
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
        let pos = atof(num_text);
        let unit = find_token(num_text, ",").ok_or_else(|| bad("no ',' before the unit"))?;
        if !unit.starts_with('m') {
            return Err(bad("the unit must be m"));
        }
        acc.defs.push((line_no, if is_pos { Def::LongAtV(pos) } else { Def::LongIndex(pos) }));
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
            acc.defs.push((line_no, Def::Kind(kind)));
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
    let mode = |v: &str| {
        BorderMode::from_code(atoi(v))
            .ok_or_else(|| header_err(line_no, format!("{key} = {} is not a border mode 0..4", v.trim())))
    };
    match key.as_str() {
        "border_mode_u" => o.border_mode_u = Some(mode(val)?),
        "border_mode_v" => o.border_mode_v = Some(mode(val)?),
        "border_offset_u" => o.border_offset_u = Some(atof(val)),
        "border_offset_v" => o.border_offset_v = Some(atof(val)),
        "border_smooth_ubeg" => o.smooth_u_begin = Some(atof(val)),
        "border_smooth_uend" => o.smooth_u_end = Some(atof(val)),
        "refline_continuation" => match atoi(val) {
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
    let v = Some(atof(val));
    match key.as_str() {
        "scale_z_grid" => m.scale_z_grid = v,
        "scale_slope" => m.scale_slope = v,
        "scale_banking" => m.scale_banking = v,
        "scale_length" => m.scale_length = v,
        "scale_width" => m.scale_width = v,
        "scale_curvature" => m.scale_curvature = v,
        "grid_nan_mode" => m.grid_nan_mode = Some(atoi(val)),
        "grid_nan_offset" => m.grid_nan_offset = v,
        "refline_rotcenter_x" => m.refline_rotcenter_x = v,
        "refline_rotcenter_y" => m.refline_rotcenter_y = v,
        "refline_offset_phi" => m.refline_offset_phi = v,
        "refline_offset_x" => m.refline_offset_x = v,
        "refline_offset_y" => m.refline_offset_y = v,
        "refline_offset_z" => m.refline_offset_z = v,
        "refpoint_u_fraction" => m.refpoint_u_fraction = v,
        "refpoint_u_offset" => m.refpoint_u_offset = v,
        "refpoint_u" => m.refpoint_u = v,
        "refpoint_v_fraction" => m.refpoint_v_fraction = v,
        "refpoint_v_offset" => m.refpoint_v_offset = v,
        "refpoint_v" => m.refpoint_v = v,
        "refpoint_x" => m.refpoint_x = v,
        "refpoint_y" => m.refpoint_y = v,
        "refpoint_z" => m.refpoint_z = v,
        "refpoint_phi" => m.refpoint_phi = v,
        other => return Err(header_err(line_no, format!("unknown modifier {other}"))),
    }
    Ok(())
}

/// Decodes the data section that starts at `start`.
fn read_data(bytes: &[u8], start: usize, acc: &mut Accumulator) -> Result<()> {
    let format = acc.format.ok_or_else(|| {
        Error::new(ErrorKind::Format(
            "no '#:' line in $KD_Definition; the C-API then misreads the data, so it is required".into(),
        ))
    })?;
    let nch = acc.defs.len();
    if nch == 0 {
        return Err(Error::new(ErrorKind::Header("$KD_Definition defines no data channel".into())));
    }
    let w = format.width();
    let data = &bytes[start.min(bytes.len())..];
    let data_out = if format.is_text() {
        let mut sink = Sink::new(&acc.defs, 0);
        let rows = read_text(data, start, nch, w, &mut sink)?;
        sink.finish(rows)
    } else {
        let row_bytes = {
            let r = nch * w;
            if format.is_long() {
                r.div_ceil(80) * 80
            } else {
                r
            }
        };
        let r = &acc.road;
        let (Some(end_u), inc, u0) = (r.end_u, r.increment.unwrap_or(0.01), r.start_u.unwrap_or(0.0)) else {
            return Err(Error::new(ErrorKind::Header(
                "binary data need REFERENCE_LINE_END_U: the number of rows comes from it".into(),
            )));
        };
        let nrows_f = (end_u - u0) / inc + 0.5;
        if !(nrows_f.is_finite() && nrows_f >= 0.0) || inc <= 0.0 {
            return Err(Error::new(ErrorKind::Inconsistent(format!(
                "REFERENCE_LINE_START_U {u0}, END_U {end_u} and INCREMENT {inc} give no row count"
            ))));
        }
        // Never allocate what the file cannot hold.
        let rows = nrows_f as u64 + 1;
        let needed = rows.saturating_mul(row_bytes as u64);
        if needed > data.len() as u64 {
            let have_rows = data.len() / row_bytes;
            return Err(Error::at_byte(
                ErrorKind::Truncated(format!(
                    "END_U asks for {rows} rows of {row_bytes} bytes ({needed} bytes), the file has {} bytes of data ({have_rows} whole rows)",
                    data.len()
                )),
                (start + data.len()) as u64,
            ));
        }
        let rows = rows as usize;
        let extra = data.len() - rows * row_bytes;
        if extra >= 80 && extra >= row_bytes {
            return Err(Error::at_byte(
                ErrorKind::Inconsistent(format!(
                    "END_U gives {rows} rows but the data section holds {} more bytes ({} more rows): END_U disagrees with the data",
                    extra,
                    extra / row_bytes
                )),
                (start + rows * row_bytes) as u64,
            ));
        }
        let mut sink = Sink::new(&acc.defs, rows);
        let nv = sink.nv;
        sink.z = vec![f32::NAN; rows * nv];
        let quiet_nan32 = |bits: u32| bits & 0x7fc0_0000 == 0x7fc0_0000;
        for i in 0..rows {
            let row = &data[i * row_bytes..i * row_bytes + nch * w];
            let zrow = &mut sink.z[i * nv..(i + 1) * nv];
            for (c, b) in row.chunks_exact(w).enumerate() {
                if w == 4 {
                    let bits = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    match sink.slot[c] {
                        // The C-API's NaN test: quiet NaN bits.
                        Ok(iv) => zrow[iv] = if quiet_nan32(bits) { f32::NAN } else { f32::from_bits(bits) },
                        Err(k) => {
                            sink.other[k].1.push(if quiet_nan32(bits) { f64::NAN } else { f32::from_bits(bits) as f64 })
                        }
                    }
                } else {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    let bits = u64::from_be_bytes(a);
                    let x = if (bits >> 32) as u32 as i32 >= 0x7ff8_0000 { f64::NAN } else { f64::from_bits(bits) };
                    match sink.slot[c] {
                        Ok(iv) => zrow[iv] = if x.is_nan() { f32::NAN } else { x as f32 },
                        Err(k) => sink.other[k].1.push(x),
                    }
                }
            }
        }
        sink.finish(rows)
    };
    acc.data = Some(data_out);
    Ok(())
}

/// Text rows: fixed-width fields, CR/LF skipped between fields, every row starts on a new line.
fn read_text(data: &[u8], start: usize, nch: usize, w: usize, sink: &mut Sink) -> Result<usize> {
    let mut rows = 0;
    let mut pos = 0;
    let skip_eol = |pos: &mut usize| {
        while *pos < data.len() && (data[*pos] == b'\n' || data[*pos] == b'\r') {
            *pos += 1;
        }
    };
    loop {
        skip_eol(&mut pos);
        // Trailing blanks (or a DOS end-of-file mark) after the last row are not a row.
        if data[pos.min(data.len())..].iter().all(|&b| b.is_ascii_whitespace() || b == 0x1a) {
            break;
        }
        sink.start_row();
        for c in 0..nch {
            skip_eol(&mut pos);
            if pos + w > data.len() || data[pos..pos + w].iter().any(|&b| b == b'\n' || b == b'\r') {
                return Err(Error::at_byte(
                    ErrorKind::Truncated(format!(
                        "row {} ends after {c} of {nch} values (each {w} characters wide)",
                        rows + 1
                    )),
                    (start + pos) as u64,
                ));
            }
            sink.put(c, text_field(&data[pos..pos + w]));
            pos += w;
        }
        // The rest of the row's last line (padding) up to its end.
        while pos < data.len() && data[pos] != b'\n' && data[pos] != b'\r' {
            pos += 1;
        }
        rows += 1;
    }
    Ok(rows)
}

/// One text field as the C-API decodes it: NaN if any character is outside `0-9+-.eEdD `
/// (`**unused**` reads as 0), else atof.
fn text_field(b: &[u8]) -> f64 {
    if b.iter().all(|c| b"0123456789+-.eEdD ".contains(c)) {
        atof(&latin1(b))
    } else if b == b"**unused**" {
        0.0
    } else {
        f64::NAN
    }
}

impl Accumulator {
    fn finish(self) -> Result<Crg> {
        let Some(data) = self.data else { return Err(Error::new(ErrorKind::NoDataSection)) };
        let nch = self.defs.len();
        // Long sections: the C-API sorts them by their number or v.
        let mut longs: Vec<(f64, usize)> = Vec::new();
        let (mut any_index, mut any_pos) = (false, false);
        for (col, (_, d)) in self.defs.iter().enumerate() {
            match d {
                Def::LongIndex(n) => {
                    any_index = true;
                    longs.push((*n, col));
                }
                Def::LongAtV(v) => {
                    any_pos = true;
                    longs.push((*v, col));
                }
                Def::Kind(_) => {}
            }
        }
        if any_index && any_pos {
            return Err(Error::new(ErrorKind::Header(
                "long sections are given both by number and by 'at v =': use one kind".into(),
            )));
        }
        if longs.len() < 2 {
            return Err(Error::new(ErrorKind::TooFewLongSections(longs.len())));
        }
        longs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let long_sections = if any_index {
            for (i, (n, _)) in longs.iter().enumerate() {
                if *n != (i + 1) as f64 {
                    return Err(Error::new(ErrorKind::Header(format!(
                        "long section numbers must be 1..{} without gaps, found {n} at position {}",
                        longs.len(),
                        i + 1
                    ))));
                }
            }
            LongSections::Indexed(longs.len())
        } else {
            let v: Vec<f64> = longs.iter().map(|l| l.0).collect();
            let min_dv = v.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
            if min_dv < 1e-6 {
                return Err(Error::new(ErrorKind::Header(format!(
                    "long sections closer than 1e-6 m (spacing {min_dv})"
                ))));
            }
            LongSections::AtV(v)
        };
        let rows = data.rows;
        if rows < 2 {
            return Err(Error::new(ErrorKind::Inconsistent(format!("{rows} cross section(s); at least 2 are needed"))));
        }
        let r = &self.road;
        if self.format.is_some_and(Format::is_text) {
            if let Some(end_u) = r.end_u {
                let u0 = r.start_u.unwrap_or(0.0);
                let inc = r.increment.unwrap_or(0.01);
                let last = u0 + inc * (rows - 1) as f64;
                if (last - end_u).abs() > 1e-6 * (1.0 + end_u.abs()) + 1e-3 * inc {
                    return Err(Error::new(ErrorKind::Inconsistent(format!(
                        "END_U is {end_u} but the {rows} rows of data with START_U {u0} and INCREMENT {inc} end at {last}"
                    ))));
                }
            }
        }
        let z = data.z;
        let mut other = data.other;
        let mut column = |kind: ChannelKind| -> Option<Vec<f64>> {
            let col = self.defs.iter().position(|(_, d)| *d == Def::Kind(kind))?;
            let k = other.iter().position(|(c, _)| *c == col)?;
            Some(std::mem::take(&mut other[k].1))
        };
        let x = column(ChannelKind::X);
        let y = column(ChannelKind::Y);
        if x.is_some() != y.is_some() {
            return Err(Error::new(ErrorKind::Header("reference line x and y channels must come together".into())));
        }
        let mut order = Vec::with_capacity(nch);
        for (col, (_, d)) in self.defs.iter().enumerate() {
            order.push(match d {
                Def::Kind(k) => *k,
                _ => ChannelKind::LongSection(longs.iter().position(|l| l.1 == col).unwrap_or(0)),
            });
        }
        Ok(Crg {
            comment: self.comment,
            road: self.road,
            options: self.options.map(|o| o.1),
            modifiers: self.modifiers.map(|m| m.1),
            other_blocks: self.other_blocks,
            format: self.format.unwrap_or_default(),
            u_line: self.u_line,
            long_sections,
            nu: rows,
            z,
            phi: column(ChannelKind::Phi),
            slope: column(ChannelKind::Slope),
            banking: column(ChannelKind::Banking),
            xy: x.zip(y),
            u: column(ChannelKind::U),
            channel_order: order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atof_is_c_like() {
        assert_eq!(atof(" 0.0111111"), 0.0111111);
        assert_eq!(atof("-1.2345e-02x"), -1.2345e-2);
        assert_eq!(atof("1.5d-3"), 1.5);
        assert_eq!(atof("  =3"), 0.0);
        assert_eq!(atof("          "), 0.0);
        assert_eq!(atof("2 ! comment"), 2.0);
        assert_eq!(atof("7.3000000000000000e+002"), 730.0);
    }

    #[test]
    fn text_fields() {
        assert!(text_field(b" *missing*").is_nan());
        assert_eq!(text_field(b"**unused**"), 0.0);
        assert!(text_field(b"**********").is_nan());
        assert_eq!(text_field(b"-0.0111111"), -0.0111111);
    }
}
