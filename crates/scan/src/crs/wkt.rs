//! A small WKT tree: `KEYWORD[args]` elements of quoted strings, numbers and nested elements,
//! parsed with a bound on the nesting, errors naming the byte; and the horizontal CRS element
//! of a plain, compound or bound CRS.

/// An element of a WKT text: `KEYWORD[args]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub(super) key: String,
    args: Vec<Arg>,
}

#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Text(String),
    Num(f64),
    Word(String),
    Node(Node),
}

/// The deepest nesting a WKT may have (real ones reach 6 or 7).
const MAX_WKT_DEPTH: usize = 32;

impl Node {
    /// Parses one element (leading and trailing blanks allowed; a NUL ends the text).
    pub(super) fn parse(text: &str) -> Result<Node, String> {
        let text = text.split('\0').next().unwrap_or_default();
        let b = text.as_bytes();
        let mut at = 0;
        let node = parse_node(b, &mut at, 0)?;
        skip_blank(b, &mut at);
        if at < b.len() {
            return Err(format!("WKT: text after the element at byte {at}"));
        }
        Ok(node)
    }

    pub(super) fn children(&self) -> impl Iterator<Item = &Node> {
        self.args.iter().filter_map(|a| if let Arg::Node(n) = a { Some(n) } else { None })
    }

    /// The first child whose keyword is one of `keys`.
    pub(super) fn child(&self, keys: &[&str]) -> Option<&Node> {
        self.children().find(|n| keys.contains(&n.key.as_str()))
    }

    /// The first text argument (the element's name).
    pub(super) fn name(&self) -> Option<&str> {
        self.args.iter().find_map(|a| if let Arg::Text(t) = a { Some(t.as_str()) } else { None })
    }

    /// The `i`-th numeric argument.
    pub(super) fn num(&self, i: usize) -> Option<f64> {
        self.args.iter().filter_map(|a| if let Arg::Num(v) = a { Some(*v) } else { None }).nth(i)
    }

    /// The EPSG code of the element's own AUTHORITY or ID.
    pub(super) fn epsg(&self) -> Option<u32> {
        self.children().filter(|n| n.key == "AUTHORITY" || n.key == "ID").find_map(|n| {
            if !n.name()?.eq_ignore_ascii_case("EPSG") {
                return None;
            }
            n.args.iter().skip(1).find_map(|a| match a {
                Arg::Num(v) if *v >= 1.0 && *v < 4.0e9 && v.fract() == 0.0 => Some(*v as u32),
                Arg::Text(t) => t.trim().parse().ok(),
                _ => None,
            })
        })
    }
}

fn skip_blank(b: &[u8], at: &mut usize) {
    while *at < b.len() && b[*at].is_ascii_whitespace() {
        *at += 1;
    }
}

fn parse_node(b: &[u8], at: &mut usize, depth: usize) -> Result<Node, String> {
    if depth > MAX_WKT_DEPTH {
        return Err(format!("WKT: nested deeper than {MAX_WKT_DEPTH} at byte {at}"));
    }
    skip_blank(b, at);
    let start = *at;
    while *at < b.len() && (b[*at].is_ascii_alphanumeric() || b[*at] == b'_') {
        *at += 1;
    }
    let key = String::from_utf8_lossy(&b[start..*at]).to_ascii_uppercase();
    skip_blank(b, at);
    let close = match b.get(*at) {
        Some(b'[') => b']',
        Some(b'(') => b')',
        _ if key.is_empty() => return Err(format!("WKT: expected an element at byte {start}")),
        _ => return Err(format!("WKT: expected '[' after {key} at byte {at}")),
    };
    *at += 1;
    let mut args = Vec::new();
    loop {
        skip_blank(b, at);
        match b.get(*at) {
            None => return Err(format!("WKT: {key} not closed at the end of the text")),
            Some(&c) if c == close => {
                *at += 1;
                return Ok(Node { key, args });
            }
            Some(b',') if !args.is_empty() => *at += 1,
            Some(_) if !args.is_empty() => return Err(format!("WKT: expected ',' or the end of {key} at byte {at}")),
            Some(_) => {}
        }
        skip_blank(b, at);
        match b.get(*at) {
            Some(b'"') => {
                // A quoted text; "" is a quote.
                let mut s = Vec::new();
                *at += 1;
                loop {
                    match b.get(*at) {
                        None => return Err(format!("WKT: a text in {key} not closed")),
                        Some(b'"') if b.get(*at + 1) == Some(&b'"') => {
                            s.push(b'"');
                            *at += 2;
                        }
                        Some(b'"') => {
                            *at += 1;
                            break;
                        }
                        Some(&c) => {
                            s.push(c);
                            *at += 1;
                        }
                    }
                }
                args.push(Arg::Text(String::from_utf8_lossy(&s).into_owned()));
            }
            Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.') => {
                let s = *at;
                while *at < b.len() && (b[*at].is_ascii_alphanumeric() || matches!(b[*at], b'-' | b'+' | b'.')) {
                    *at += 1;
                }
                let t = String::from_utf8_lossy(&b[s..*at]);
                let v: f64 = t.parse().map_err(|_| format!("WKT: '{t}' in {key} at byte {s} is not a number"))?;
                args.push(Arg::Num(v));
            }
            Some(c) if c.is_ascii_alphabetic() => {
                // A word (EAST, NORTH) or an element.
                let s = *at;
                let mut e = s;
                while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                    e += 1;
                }
                let mut after = e;
                skip_blank(b, &mut after);
                if matches!(b.get(after), Some(b'[') | Some(b'(')) {
                    args.push(Arg::Node(parse_node(b, at, depth + 1)?));
                } else {
                    args.push(Arg::Word(String::from_utf8_lossy(&b[s..e]).into_owned()));
                    *at = e;
                }
            }
            _ => return Err(format!("WKT: unexpected character in {key} at byte {at}")),
        }
    }
}

/// The horizontal CRS of a WKT CRS: itself, or the horizontal part of a compound CRS (and the
/// source CRS of a WKT2 bound CRS).
pub(super) fn horizontal(node: &Node) -> Option<&Node> {
    const HORIZONTAL: [&str; 6] = ["PROJCS", "PROJCRS", "GEOGCS", "GEOGCRS", "GEODCRS", "GEOCCS"];
    match node.key.as_str() {
        k if HORIZONTAL.contains(&k) => Some(node),
        "COMPD_CS" | "COMPOUNDCRS" => node.children().find_map(horizontal),
        "BOUNDCRS" => node.child(&["SOURCECRS"]).and_then(|s| s.children().find_map(horizontal)),
        _ => None,
    }
}
