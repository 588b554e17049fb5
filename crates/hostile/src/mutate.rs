//! Mutations of inputs: byte-level (flips, inserts, deletes, duplicated ranges, splices,
//! interesting integers and floats written in place) and token-level for text formats (a
//! number replaced by an interesting one, lines deleted, duplicated or swapped, an element or
//! a field repeated). Shared by the corpus generator and the fuzzer.

use crate::rng::Rng;

/// Numbers that break arithmetic and bounds, as text.
pub const INTERESTING_TEXT: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "infinity",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1e999",
    "0x10",
    "1.7976931348623157e308",
    "4.9e-324",
    "",
    "abcdefghi",
];

/// Interesting 64-bit floats (their little-endian bytes are written by [`mutate_bytes`]).
pub const INTERESTING_F64: &[f64] =
    &[0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e308, 1e-300, f64::MAX, f64::MIN_POSITIVE];

/// Interesting unsigned integers (written as 1, 2, 4 or 8 little-endian bytes).
pub const INTERESTING_INT: &[u64] =
    &[0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, u64::MAX, 1 << 31, 1 << 40];

/// One random byte-level mutation of `data`, with `other` (another seed) for splices.
pub fn mutate_bytes(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    let len = data.len();
    match rng.below(9) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.next_u64() as u8;
        }
        2 => {
            let n = 1 + rng.below(16);
            let at = rng.below(len + 1);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            data.splice(at..at, bytes);
        }
        3 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(64));
            data.drain(at..at + n);
        }
        4 if len > 0 => {
            // Duplicate a range (repeated records, nested elements).
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(256));
            let copy = data[at..at + n].to_vec();
            let to = rng.below(len + 1);
            data.splice(to..to, copy);
        }
        5 if !other.is_empty() => {
            // Splice: our head, the other's tail.
            let cut = rng.below(len + 1);
            let from = rng.below(other.len());
            data.truncate(cut);
            data.extend_from_slice(&other[from..]);
        }
        6 if len >= 8 => {
            let at = rng.below(len - 7);
            let v = rng.pick(INTERESTING_F64).copied().unwrap_or(f64::NAN);
            data[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        7 if len >= 8 => {
            let width = [1usize, 2, 4, 8][rng.below(4)];
            let at = rng.below(len - width + 1);
            let v = rng.pick(INTERESTING_INT).copied().unwrap_or(0);
            data[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        }
        _ if len > 0 => {
            let at = rng.below(len);
            data.truncate(at);
        }
        _ => data.push(rng.next_u64() as u8),
    }
}

/// Byte ranges of the number tokens in `data` (ASCII digits with sign, point and exponent).
pub fn number_tokens(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let starts = data[i].is_ascii_digit()
            || ((data[i] == b'-' || data[i] == b'.') && data.get(i + 1).is_some_and(u8::is_ascii_digit));
        let after_word = i > 0 && (data[i - 1].is_ascii_alphanumeric() || data[i - 1] == b'_');
        if starts && !after_word {
            let start = i;
            i += 1;
            while i < data.len() && (data[i].is_ascii_digit() || b".eE+-".contains(&data[i])) {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// One random token-level mutation of a text input (falls back to bytes when it has no
/// numbers or lines to work on).
pub fn mutate_text(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    match rng.below(6) {
        0 | 1 => {
            let tokens = number_tokens(data);
            if let Some(&(a, b)) = rng.pick(&tokens) {
                let v = rng.pick(INTERESTING_TEXT).copied().unwrap_or("nan");
                data.splice(a..b, v.bytes());
                return;
            }
        }
        2..=4 => {
            let mut lines: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            if lines.len() > 1 {
                let i = rng.below(lines.len());
                let j = rng.below(lines.len());
                match rng.below(4) {
                    0 => {
                        lines.remove(i);
                    }
                    1 => {
                        let l = lines[i].clone();
                        let n = 1 + rng.below(64);
                        for _ in 0..n {
                            lines.insert(j.min(lines.len()), l.clone());
                        }
                    }
                    2 => lines.swap(i, j),
                    _ => {
                        let keep = rng.below(lines[i].len() + 1);
                        lines[i].truncate(keep);
                    }
                }
                *data = lines.join(&b'\n');
                return;
            }
        }
        _ => {}
    }
    mutate_bytes(rng, data, other);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_tokens_are_whole_numbers_not_parts_of_names() {
        let t = br#"<a x="1.5e3" y="-2" id2="7"/> 42"#;
        let toks: Vec<&[u8]> = number_tokens(t).into_iter().map(|(a, b)| &t[a..b]).collect();
        assert_eq!(toks, vec![&b"1.5e3"[..], b"-2", b"7", b"42"]);
    }

    #[test]
    fn mutations_are_deterministic_and_change_the_input() {
        let seed = b"x,y\n1,2\n3,4\n".to_vec();
        let run = |s: u64| {
            let mut r = Rng::new(s);
            (0..50)
                .map(|_| {
                    let mut d = seed.clone();
                    mutate_text(&mut r, &mut d, b"other");
                    d
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert!(run(3).iter().filter(|d| **d != seed).count() > 40);
    }
}
