//! Reading CRG files: the text header (blocks and keys as the reference C-API recognises them)
//! and the data section in all six formats.
//!
//! Where the C-API is lenient in ways that misread data we are strict and say why: an unknown
//! `D:` channel or `#:` tag, a binary data section shorter than the header says (never read
//! past the end), END_U that disagrees with the rows of a text file, a declared size larger than
//! the file (nothing is allocated for it), include loops. Also errors here where the C-API reads
//! on silently: a header value that is no number (the C-API takes 0), NaN or infinite, an
//! increment below [`MIN_INCREMENT`], a header v range declaring more long sections than the data
//! hold, a text field that is not one number or a `*` placeholder (the C-API makes it NaN or
//! reads its first number), an infinite data value, a text line holding more or fewer values
//! than the row layout (the C-API reads across line ends, shifting the rest of the grid). NaN in
//! the data stays what it is in OpenCRG: no height. Header errors name the line; data errors the
//! byte (and the line of text data), the row and the column.

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
    load(path, None, options, &mut stack, &mut acc)?;
    acc.finish().map_err(|e| e.with_path(path))
}

/// Parses CRG bytes that have no `$ROAD_CRG_FILE` include.
pub fn read_bytes(bytes: &[u8]) -> Result<Crg> {
    let mut acc = Accumulator::default();
    parse(bytes, None, 0, None, &ReadOptions::default(), &mut Vec::new(), &mut acc)?;
    acc.finish()
}

/// The smallest increment (u and v) and long-section spacing read: the reference C-API's own
/// limit for u, v and reference-line spacing (1e-6 m). Smaller increments are not a grid.
pub const MIN_INCREMENT: f64 = 1e-6;

/// Most files in a chain of `$ROAD_CRG_FILE` includes, the top file counted.
const MAX_INCLUDE_DEPTH: usize = 8;

/// Largest CRG file read, bytes: 2 GiB. A regular file that is larger is refused by its size
/// before anything is read; anything else (a pipe, a device such as `/dev/zero`) is read up to
/// that many bytes, then refused: the bound, not the kind of file, keeps the memory finite.
pub const MAX_FILE_BYTES: u64 = 1 << 31;

/// The bytes of `path`, at most `max` ([`MAX_FILE_BYTES`]) of them.
fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string()));
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Error::new(ErrorKind::Io("is a directory, not a CRG file".into())));
    }
    if meta.is_file() && meta.len() > max {
        return Err(Error::new(ErrorKind::Io(format!(
            "the file is {} bytes long; CRG files over {max} bytes are not read",
            meta.len()
        ))));
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() { meta.len() as usize + 1 } else { 1 << 16 });
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(Error::new(ErrorKind::Io(format!(
            "more than {max} bytes read and the input goes on; CRG files over {max} bytes are not read (is it a \
             device or an endless pipe?)"
        ))));
    }
    Ok(bytes)
}

/// The `$ROAD_CRG_FILE` statement that includes a file: the including file (None for
/// [`read_bytes`]) and the line of the statement.
type Includer<'a> = Option<(Option<&'a Path>, usize)>;

/// Reads `path` (included by `from`, None for the top file) and what it includes. A loop or a
/// chain deeper than [`MAX_INCLUDE_DEPTH`] is an error at the include statement that closes the
/// loop or goes too deep: its file and line.
fn load(
    path: &Path,
    from: Includer,
    options: &ReadOptions,
    stack: &mut Vec<PathBuf>,
    acc: &mut Accumulator,
) -> Result<()> {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let looped = stack.contains(&canonical);
    if looped || stack.len() >= MAX_INCLUDE_DEPTH {
        let chain: Vec<String> =
            stack.iter().chain(std::iter::once(&canonical)).map(|p| p.display().to_string()).collect();
        let chain = chain.join(" -> ");
        let kind = if looped {
            ErrorKind::IncludeLoop(format!("$ROAD_CRG_FILE includes {} again: {chain}", path.display()))
        } else {
            ErrorKind::Header(format!("$ROAD_CRG_FILE includes nest more than {MAX_INCLUDE_DEPTH} files deep: {chain}"))
        };
        return Err(match from {
            Some((Some(includer), line)) => Error::at_line(kind, line).with_path(includer),
            Some((None, line)) => Error::at_line(kind, line),
            None => Error::new(kind).with_path(path),
        });
    }
    let bytes = read_bounded(path, MAX_FILE_BYTES).map_err(|e| e.with_path(path))?;
    stack.push(canonical);
    let level = stack.len() - 1;
    let dir = options.include_dir.clone().or_else(|| path.parent().map(Path::to_path_buf));
    let r = parse(&bytes, Some(path), level, dir.as_deref(), options, stack, acc).map_err(|e| e.with_path(path));
    stack.pop();
    r
}

/// Where something was read: the file (None for [`read_bytes`]) and the 1-based line.
#[derive(Debug, Clone, Default)]
struct Origin {
    path: Option<PathBuf>,
    line: usize,
}

impl Origin {
    /// An error at this place (the path set here wins over the top file's, added later).
    fn err(&self, kind: ErrorKind) -> Error {
        let e = Error::at_line(kind, self.line);
        match &self.path {
            Some(p) => e.with_path(p),
            None => e,
        }
    }
}

/// What the blocks of the top file and its includes add up to.
#[derive(Default)]
struct Accumulator {
    /// Where each `$ROAD_CRG` key was (last) set.
    key_origin: Vec<(&'static str, Origin)>,
    /// Where the data section starts (the `$$$$` line).
    data_origin: Option<Origin>,
    comment: Vec<String>,
    road: RoadParams,
    /// (file level that set them, options)
    options: Option<(usize, Options)>,
    modifiers: Option<(usize, Modifiers)>,
    other_blocks: Vec<(String, Vec<String>)>,
    format: Option<Format>,
    u_line: Option<String>,
    /// (place, definition) in file order
    defs: Vec<(Origin, Def)>,
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
    fn new(defs: &[(Origin, Def)], rows_hint: usize) -> Sink {
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

/// The longest decimal number at the start of `s` after blanks, as C `atof` reads it, and the
/// bytes it spans (from the start of `s`); `None` when `s` does not start with one (`atof` then
/// gives 0). NaN and infinity words are not numbers here.
fn number_prefix(s: &str) -> Option<(f64, usize)> {
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
        return None;
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
    s[start..end].parse().ok().map(|x| (x, end))
}

/// A header number as the C-API reads it (the `atof` prefix of the text after '='; text after
/// the number is ignored, as there), but an error where the C-API would silently take 0 (no
/// number) or a value no grid can use (NaN, infinity, overflow). The error shows the value as
/// written, up to a '!' comment.
fn header_number(key: &str, val: &str, line_no: usize) -> Result<f64> {
    let text = val.split('!').next().unwrap_or("").trim();
    let bad = |problem: &str| {
        Error::at_line(
            ErrorKind::HeaderValue {
                key: key.to_ascii_uppercase(),
                text: text.to_string(),
                problem: problem.to_string(),
            },
            line_no,
        )
    };
    match number_prefix(text) {
        Some((x, _)) if x.is_finite() => Ok(x),
        Some(_) => Err(bad("not a finite number (beyond the range of a double)")),
        None => {
            let word = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
            if word.starts_with("nan") || word.starts_with("inf") {
                Err(bad("not a finite number"))
            } else if text.is_empty() {
                Err(bad("no value"))
            } else {
                Err(bad("not a number"))
            }
        }
    }
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

#[allow(clippy::too_many_arguments)]
fn parse(
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

/// A value for messages: plain, in scientific notation when very large or small (NaN as NaN).
fn show(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A count for messages: whole, in scientific notation when huge.
fn count(x: f64) -> String {
    if x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:e}")
    }
}

/// A data value that is neither a number nor NaN ("no height"), or too large for the channel.
fn bad_value(x: f64, long_section: bool) -> Option<&'static str> {
    if x.is_infinite() {
        Some("infinite, not a height or reference line value (NaN marks a missing value)")
    } else if long_section && !x.is_nan() && (x as f32).is_infinite() {
        Some("beyond the range of single precision, in which heights are kept")
    } else {
        None
    }
}

/// Decodes the data section that starts at byte `start`, after the `$$$$` separator on line
/// `sep_line`.
fn read_data(bytes: &[u8], start: usize, sep_line: usize, acc: &mut Accumulator) -> Result<()> {
    let at_sep = |kind: ErrorKind| Error::at_line(kind, sep_line);
    let format = acc.format.ok_or_else(|| {
        at_sep(ErrorKind::Format(
            "no '#:' line in $KD_Definition before the data section; the C-API then misreads the data, so it is required".into(),
        ))
    })?;
    let nch = acc.defs.len();
    if nch == 0 {
        return Err(at_sep(ErrorKind::Header("$KD_Definition defines no data channel before the data section".into())));
    }
    let w = format.width();
    let data = &bytes[start.min(bytes.len())..];
    let data_out = if format.is_text() {
        let mut sink = Sink::new(&acc.defs, 0);
        let rows = read_text(data, start, sep_line, nch, w, &mut sink)?;
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
        let Some(end_u) = r.end_u else {
            return Err(at_sep(ErrorKind::Header(
                "binary data need REFERENCE_LINE_END_U: the number of rows comes from it".into(),
            )));
        };
        // All finite, the increment at least MIN_INCREMENT: checked on their lines.
        let (inc, u0) = (r.increment.unwrap_or(0.01), r.start_u.unwrap_or(0.0));
        let end_line = acc.origin("reference_line_end_u").map_or(0, |o| o.line);
        let spans = (end_u - u0) / inc;
        if spans.is_nan() || spans < 0.0 {
            let origin = acc.origin("reference_line_end_u").cloned().unwrap_or_default();
            return Err(origin.err(ErrorKind::HeaderValue {
                key: "REFERENCE_LINE_END_U".into(),
                text: show(end_u),
                problem: format!("lies before REFERENCE_LINE_START_U = {}: no rows", show(u0)),
            }));
        }
        // Never allocate what the file cannot hold: the row count is compared with the data in
        // floating point, before it becomes an integer (1e300 rows must not wrap around).
        let rows_f = (spans + 0.5).floor() + 1.0;
        let have_rows = data.len() / row_bytes;
        if rows_f > have_rows as f64 {
            return Err(Error::at_byte(
                ErrorKind::Truncated(format!(
                    "END_U asks for {} rows of {row_bytes} bytes (REFERENCE_LINE_END_U = {} on line {end_line}, START_U = {}, INCREMENT = {}), the file has {} bytes of data ({have_rows} whole rows)",
                    count(rows_f),
                    show(end_u),
                    show(u0),
                    show(inc),
                    data.len()
                )),
                (start + data.len()) as u64,
            ));
        }
        let rows = rows_f as usize;
        let extra = data.len() - rows * row_bytes;
        if extra >= 80 && extra >= row_bytes {
            return Err(Error::at_byte(
                ErrorKind::Inconsistent(format!(
                    "END_U gives {rows} rows but the data section holds {} more bytes ({} more rows): END_U disagrees with the data (REFERENCE_LINE_END_U on line {end_line})",
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
                // The C-API's NaN tests: quiet NaN bits.
                let x = if w == 4 {
                    let bits = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    if quiet_nan32(bits) {
                        f64::NAN
                    } else {
                        f32::from_bits(bits) as f64
                    }
                } else {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    let bits = u64::from_be_bytes(a);
                    if (bits >> 32) as u32 as i32 >= 0x7ff8_0000 {
                        f64::NAN
                    } else {
                        f64::from_bits(bits)
                    }
                };
                let slot = sink.slot[c];
                if let Some(problem) = bad_value(x, slot.is_ok()) {
                    return Err(Error::at_byte(
                        ErrorKind::DataValue {
                            row: i + 1,
                            column: c + 1,
                            problem: format!("{} is {problem}", show(x)),
                        },
                        (start + i * row_bytes + c * w) as u64,
                    ));
                }
                match slot {
                    Ok(iv) => zrow[iv] = if x.is_nan() { f32::NAN } else { x as f32 },
                    Err(k) => sink.other[k].1.push(x),
                }
            }
        }
        sink.finish(rows)
    };
    acc.data = Some(data_out);
    Ok(())
}

/// Text rows: fixed-width fields; every row starts on a new line and is either all its values
/// on one line or (the standard layout) lines of 80 characters' worth of values, the last line
/// holding the rest. A line holding more or fewer values than that is an error (the C-API
/// reads on across line ends, so the rest of its grid shifts). Empty lines are skipped, as the
/// C-API skips line ends; blanks and a DOS end-of-file mark after the last row end the data.
fn read_text(data: &[u8], start: usize, sep_line: usize, nch: usize, w: usize, sink: &mut Sink) -> Result<usize> {
    let per_line = 80 / w;
    let mut rows = 0;
    let mut in_row = 0usize;
    let mut rest = data;
    let mut line_no = sep_line;
    let blank = |b: &u8| *b == b' ' || *b == b'\t' || *b == 0x1a;
    loop {
        if in_row == 0 && rest.iter().all(|&b| b.is_ascii_whitespace() || b == 0x1a) {
            break;
        }
        if rest.is_empty() {
            return Err(Error::at_line_byte(
                ErrorKind::Truncated(format!(
                    "row {} ends after {in_row} of {nch} values (each {w} characters wide)",
                    rows + 1
                )),
                line_no,
                (start + data.len()) as u64,
            ));
        }
        let (raw, after) = next_line(rest);
        let offset = start + (data.len() - rest.len());
        rest = after;
        line_no += 1;
        if raw.is_empty() {
            continue;
        }
        let len = raw.len() - raw.iter().rev().take_while(|b| blank(b)).count();
        let content = &raw[..len];
        let found = len.div_ceil(w);
        let expected = (nch - in_row).min(per_line);
        let whole_row = in_row == 0 && found == nch;
        if found != expected && !whole_row {
            return Err(Error::at_line_byte(
                ErrorKind::RowLength { row: rows + 1, found, expected, channels: nch, per_line },
                line_no,
                offset as u64,
            ));
        }
        if in_row == 0 {
            sink.start_row();
        }
        for (k, field) in content.chunks(w).enumerate() {
            let column = in_row + k;
            let bad = |problem: String| {
                Error::at_line_byte(
                    ErrorKind::DataValue { row: rows + 1, column: column + 1, problem },
                    line_no,
                    (offset + k * w) as u64,
                )
            };
            let x = text_field(field).map_err(&bad)?;
            if let Some(problem) = bad_value(x, sink.slot[column].is_ok()) {
                return Err(bad(format!("'{}' is {problem}", latin1(field).trim())));
            }
            sink.put(column, x);
        }
        in_row += found;
        if in_row == nch {
            rows += 1;
            in_row = 0;
        }
    }
    Ok(rows)
}

/// One text field. As the C-API: a field starting with `*` is a placeholder for no value, NaN
/// (`*missing*`, `**********`), except `**unused**`, which it reads as 0. Also NaN: the word
/// `NaN`. Anything else must be one decimal number filling the field (blanks aside); where the
/// C-API would read a text that is not one as NaN or as the number it starts with (`abc`,
/// `1.5d-3`, `1 2`, blanks), that is an error here.
fn text_field(b: &[u8]) -> std::result::Result<f64, String> {
    if b == b"**unused**" {
        return Ok(0.0);
    }
    let text = latin1(b);
    let t = text.trim_matches(' ');
    if t.starts_with('*') || t.eq_ignore_ascii_case("nan") {
        return Ok(f64::NAN);
    }
    if t.is_empty() {
        return Err(format!("an empty field ({} blanks): no number, and not *missing*", b.len()));
    }
    match number_prefix(t) {
        Some((x, used)) if used == t.len() => Ok(x),
        _ => Err(format!("'{t}' is not a number (no data is written *missing*)")),
    }
}

fn origin_of<'a>(list: &'a [(&'static str, Origin)], key: &str) -> Option<&'a Origin> {
    list.iter().find(|(k, _)| *k == key).map(|(_, o)| o)
}

impl Accumulator {
    /// Where `$ROAD_CRG` key `key` (lower case, as in road_line) was set.
    fn origin(&self, key: &str) -> Option<&Origin> {
        origin_of(&self.key_origin, key)
    }

    fn finish(self) -> Result<Crg> {
        let Some(data) = self.data else { return Err(Error::new(ErrorKind::NoDataSection)) };
        let data_origin = self.data_origin.clone().unwrap_or_default();
        let key_origin = |key: &str| origin_of(&self.key_origin, key).cloned().unwrap_or_else(|| data_origin.clone());
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
            let origin = self.defs.iter().rfind(|(_, d)| matches!(d, Def::LongAtV(_))).map(|(o, _)| o);
            return Err(origin.unwrap_or(&data_origin).err(ErrorKind::Header(
                "long sections are given both by number and by 'at v =': use one kind".into(),
            )));
        }
        if longs.len() < 2 {
            return Err(data_origin.err(ErrorKind::TooFewLongSections(longs.len())));
        }
        longs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let long_sections = if any_index {
            for (i, (n, col)) in longs.iter().enumerate() {
                if *n != (i + 1) as f64 {
                    return Err(self.defs[*col].0.err(ErrorKind::Header(format!(
                        "long section numbers must be 1..{} without gaps, found {n} at position {}",
                        longs.len(),
                        i + 1
                    ))));
                }
            }
            LongSections::Indexed(longs.len())
        } else {
            let v: Vec<f64> = longs.iter().map(|l| l.0).collect();
            if let Some(i) = (1..v.len()).find(|&i| v[i] - v[i - 1] < MIN_INCREMENT) {
                return Err(self.defs[longs[i].1].0.err(ErrorKind::Header(format!(
                    "long sections at v = {} and {} are closer than {} m",
                    show(v[i - 1]),
                    show(v[i]),
                    show(MIN_INCREMENT)
                ))));
            }
            LongSections::AtV(v)
        };
        let rows = data.rows;
        if rows < 2 {
            return Err(
                data_origin.err(ErrorKind::Inconsistent(format!("{rows} cross section(s); at least 2 are needed")))
            );
        }
        let r = &self.road;
        // Header values are finite and increments at least MIN_INCREMENT (checked on their
        // lines); what they span must be finite too.
        let u0 = r.start_u.unwrap_or(0.0);
        let inc = r.increment.unwrap_or(0.01);
        let last = u0 + inc * (rows - 1) as f64;
        if !last.is_finite() {
            return Err(key_origin("reference_line_increment").err(ErrorKind::HeaderValue {
                key: "REFERENCE_LINE_INCREMENT".into(),
                text: show(inc),
                problem: format!("{rows} rows from START_U = {} end at u = {}", show(u0), show(last)),
            }));
        }
        if self.format.is_some_and(Format::is_text) {
            if let Some(end_u) = r.end_u {
                // NaN-safe: anything but a match within the tolerance is an error.
                let off = (last - end_u).abs();
                if off.is_nan() || off > 1e-6 * (1.0 + end_u.abs()) + 1e-3 * inc {
                    return Err(key_origin("reference_line_end_u").err(ErrorKind::Inconsistent(format!(
                        "END_U is {} but the {rows} rows of data with START_U {} and INCREMENT {} end at {}",
                        show(end_u),
                        show(u0),
                        show(inc),
                        show(last)
                    ))));
                }
            }
        }
        if let LongSections::Indexed(nv) = long_sections {
            let right = r.v_right.unwrap_or(0.0);
            let dv = r.v_increment.unwrap_or(0.01);
            let v_last = right + dv * (nv - 1) as f64;
            let inc_origin = || {
                origin_of(&self.key_origin, "long_section_v_increment")
                    .or(origin_of(&self.key_origin, "long_section_v_left"))
                    .cloned()
                    .unwrap_or_else(|| data_origin.clone())
            };
            if !v_last.is_finite() {
                return Err(inc_origin().err(ErrorKind::HeaderValue {
                    key: "LONG_SECTION_V_INCREMENT".into(),
                    text: show(dv),
                    problem: format!("{nv} long sections from V_RIGHT = {} end at v = {}", show(right), show(v_last)),
                }));
            }
            // The header's v range may not declare more long sections than the data hold.
            if let (Some(_), Some(left)) = (r.v_right, r.v_left) {
                if left > v_last + 1e-6 * (1.0 + left.abs()) + 1e-3 * dv {
                    return Err(inc_origin().err(ErrorKind::Inconsistent(format!(
                        "LONG_SECTION_V_RIGHT = {}, V_LEFT = {} and V_INCREMENT = {} declare {} long sections, the data hold {nv} (ending at v = {})",
                        show(right),
                        show(left),
                        show(dv),
                        count(((left - right) / dv + 0.5).floor() + 1.0),
                        show(v_last)
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
            let origin =
                self.defs.iter().find(|(_, d)| matches!(d, Def::Kind(ChannelKind::X | ChannelKind::Y))).map(|(o, _)| o);
            return Err(origin
                .unwrap_or(&data_origin)
                .err(ErrorKind::Header("reference line x and y channels must come together".into())));
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

    /// C `atof`: the longest numeric prefix after blanks; 0 when there is none.
    fn atof(s: &str) -> f64 {
        number_prefix(s).map_or(0.0, |(x, _)| x)
    }

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
        let nan = |b: &[u8]| text_field(b).is_ok_and(f64::is_nan);
        assert!(nan(b" *missing*") && nan(b"**********") && nan(b"       NaN"));
        assert_eq!(text_field(b"**unused**"), Ok(0.0));
        assert_eq!(text_field(b"-0.0111111"), Ok(-0.0111111));
        assert_eq!(text_field(b" 1.5e-02  "), Ok(0.015));
        // The C-API reads these as NaN, 1.5, 1 and 0: errors here.
        for bad in [&b" abcdefghi"[..], b"    1.5d-3", b"   1   2  ", b"          ", b"  0.01x   "] {
            assert!(text_field(bad).is_err(), "{}", latin1(bad));
        }
        // Infinity is read (and then refused as a data value by the caller).
        assert_eq!(text_field(b"     1e400"), Ok(f64::INFINITY));
    }

    #[test]
    fn header_numbers() {
        assert_eq!(header_number("k", " 2.000000000+e00 ! sample", 3), Ok(2.0));
        assert_eq!(header_number("k", "=-1.50  ", 3).ok(), None);
        assert_eq!(header_number("k", "-1.50  ! c", 3), Ok(-1.5));
        for (text, problem) in [
            ("NaN", "not a finite number"),
            ("-inf", "not a finite number"),
            ("1e999", "not a finite number (beyond"),
            ("abc", "not a number"),
            ("", "no value"),
        ] {
            let e = header_number("reference_line_end_z", &format!(" {text} ! comment"), 7).expect_err(text);
            assert_eq!(e.line(), Some(7));
            assert!(e.to_string().starts_with(&format!("line 7: REFERENCE_LINE_END_Z = {text}: {problem}")), "{e}");
        }
    }
}

#[cfg(test)]
mod bound_tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_regular_file_over_the_bound_is_refused_by_its_size() {
        let path = std::env::temp_dir().join(format!("roadscan-crg-bound-{}.crg", std::process::id()));
        std::fs::write(&path, "$CT\n".repeat(50)).unwrap();
        let r = read_bounded(&path, 100);
        let _ = std::fs::remove_file(&path);
        let e = r.unwrap_err();
        assert!(e.to_string().contains("200 bytes long"), "{e}");
    }

    /// /proc files say they are regular and 0 bytes long: what they hold is only found by
    /// reading, as for a pipe or a device (`/dev/zero` never ends); the bound stops the read.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_input_of_unknown_size_is_read_up_to_the_bound_only() {
        let whole = read_bounded(Path::new("/proc/self/maps"), MAX_FILE_BYTES).unwrap();
        assert!(whole.len() > 100);
        let e = read_bounded(Path::new("/proc/self/maps"), 100).unwrap_err();
        assert!(e.to_string().contains("the input goes on"), "{e}");
        let t = std::time::Instant::now();
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("the input goes on") && t.elapsed().as_secs() < 5, "{e}");
    }
}
