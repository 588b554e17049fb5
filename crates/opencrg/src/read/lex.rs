//! The lexical layer of the CRG reader: lines (LF, CR or CRLF), Latin-1 text, numbers as C
//! `atof` reads them (but errors where the C-API would silently take 0 or a value no grid can
//! use), `key = value` and token lookup as the C-API does them, and values for messages.

use crate::error::{Error, ErrorKind, Result};

/// Splits off one line (LF, CR or CRLF); returns (line, rest).
pub(super) fn next_line(data: &[u8]) -> (&[u8], &[u8]) {
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

pub(super) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

/// The longest decimal number at the start of `s` after blanks, as C `atof` reads it, and the
/// bytes it spans (from the start of `s`); `None` when `s` does not start with one (`atof` then
/// gives 0). NaN and infinity words are not numbers here.
pub(super) fn number_prefix(s: &str) -> Option<(f64, usize)> {
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
pub(super) fn header_number(key: &str, val: &str, line_no: usize) -> Result<f64> {
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
pub(super) fn value_of(line: &str) -> Option<&str> {
    line.find('=').map(|i| &line[i + 1..])
}

pub(super) fn starts_with_ci(s: &str, p: &str) -> bool {
    s.len() >= p.len() && s.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
}

/// The C-API's findToken: the text after the first case-insensitive occurrence of `token`
/// before any '!'.
pub(super) fn find_token<'a>(hay: &'a str, token: &str) -> Option<&'a str> {
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

pub(super) fn header_err(line: usize, msg: String) -> Error {
    Error::at_line(ErrorKind::Header(msg), line)
}

/// A value for messages: plain, in scientific notation when very large or small (NaN as NaN).
pub(super) fn show(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A count for messages: whole, in scientific notation when huge.
pub(super) fn count(x: f64) -> String {
    if x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:e}")
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
