//! The data section of a CRG file in all six formats (text LRFI/LDFI, binary KRBI/KDBI and
//! the padded LRBI/LDBI): each value routed to its long section or channel, the section never
//! read past its end, and a bad value, a short section or a text line of the wrong layout an
//! error naming the byte, the line, the row and the column.

use super::accumulate::{Accumulator, Data, Def};
use super::lex::{count, latin1, next_line, number_prefix, show};
use super::Origin;
use crate::error::{Error, ErrorKind, Result};

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
pub(super) fn read_data(bytes: &[u8], start: usize, sep_line: usize, acc: &mut Accumulator) -> Result<()> {
    let at_sep = |kind: ErrorKind| Error::at_line(kind, sep_line);
    let format = acc.format.ok_or_else(|| {
        at_sep(ErrorKind::Format(
            "no '#:' line in $KD_Definition before the data section; the C-API then misreads the data, so it is required".into(),
        ))
    })?;
    // A long file's data section is still in the file: text is read into memory whole,
    // binary rows one at a time.
    let mut tail = acc.tail.take();
    if let (true, Some(t)) = (format.is_text(), tail.as_mut()) {
        use std::io::Read;
        let mut all = bytes.to_vec();
        (&mut t.reader).take(t.len).read_to_end(&mut all).map_err(|e| Error::new(ErrorKind::Io(e.to_string())))?;
        return read_data(&all, start, sep_line, acc);
    }
    let nch = acc.defs.len();
    if nch == 0 {
        return Err(at_sep(ErrorKind::Header("$KD_Definition defines no data channel before the data section".into())));
    }
    let w = format.width();
    let data = &bytes[start.min(bytes.len())..];
    // Bytes of data: those read and those still in the file.
    let data_len = data.len().saturating_add(tail.as_ref().map_or(0, |t| t.len as usize));
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
        let have_rows = data_len / row_bytes;
        if rows_f > have_rows as f64 {
            return Err(Error::at_byte(
                ErrorKind::Truncated(format!(
                    "END_U asks for {} rows of {row_bytes} bytes (REFERENCE_LINE_END_U = {} on line {end_line}, START_U = {}, INCREMENT = {}), the file has {} bytes of data ({have_rows} whole rows)",
                    count(rows_f),
                    show(end_u),
                    show(u0),
                    show(inc),
                    data_len
                )),
                (start + data_len) as u64,
            ));
        }
        let rows = rows_f as usize;
        let extra = data_len - rows * row_bytes;
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
        // Into the room `Sink::new` reserved for the rows (one grid allocated, not two).
        sink.z.resize(rows * nv, f32::NAN);
        let quiet_nan32 = |bits: u32| bits & 0x7fc0_0000 == 0x7fc0_0000;
        // The rows from memory, then from the file.
        let mut source: Box<dyn std::io::Read + '_> = match tail {
            Some(t) => Box::new(std::io::Read::chain(data, t.reader)),
            None => Box::new(data),
        };
        let mut buf = vec![0u8; row_bytes];
        for i in 0..rows {
            source.read_exact(&mut buf).map_err(|e| {
                Error::at_byte(
                    ErrorKind::Truncated(format!("row {} of {rows} could not be read: {e}", i + 1)),
                    (start + i * row_bytes) as u64,
                )
            })?;
            let row = &buf[..nch * w];
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
