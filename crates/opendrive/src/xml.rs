//! A small XML tree: the reader parses into it (with byte positions for error messages), the
//! model keeps unknown elements as it, and the writer prints it back.

use crate::error::{Error, ErrorKind, Position};
use quick_xml::events::Event;
use std::borrow::Cow;

/// An XML element kept verbatim (unknown elements, `userData`, vendor extensions).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Element {
    /// Tag name.
    pub name: String,
    /// Attributes in document order, values unescaped.
    pub attributes: Vec<(String, String)>,
    /// Child nodes; whitespace between elements is not kept.
    pub children: Vec<Node>,
}

/// A child node of an [`Element`].
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A child element.
    Element(Element),
    /// Character data (unescaped).
    Text(String),
    /// A CDATA section.
    CData(String),
}

/// Dropping a tree takes a loop, not a recursion: an element's descendants are emptied one
/// by one from a stack, so no tree (however deep, read or built) can overflow the call stack
/// when it is dropped.
impl Drop for Element {
    fn drop(&mut self) {
        let deep = |n: &Node| matches!(n, Node::Element(e) if !e.children.is_empty());
        if !self.children.iter().any(deep) {
            return;
        }
        let mut stack: Vec<Element> = Vec::new();
        let take = |children: &mut Vec<Node>, stack: &mut Vec<Element>| {
            for n in children.drain(..) {
                if let Node::Element(e) = n {
                    if !e.children.is_empty() {
                        stack.push(e);
                    }
                }
            }
        };
        take(&mut self.children, &mut stack);
        while let Some(mut e) = stack.pop() {
            take(&mut e.children, &mut stack);
        }
    }
}

impl Element {
    /// A new element with a name and no content.
    pub fn new(name: impl Into<String>) -> Self {
        Element { name: name.into(), attributes: Vec::new(), children: Vec::new() }
    }

    /// The child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            _ => None,
        })
    }

    /// The value of an attribute.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Concatenated text and CDATA content of the element itself.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for n in &self.children {
            match n {
                Node::Text(t) | Node::CData(t) => s.push_str(t),
                Node::Element(_) => {}
            }
        }
        s
    }

    /// True when the element's text came (at least partly) from a CDATA section.
    pub fn has_cdata(&self) -> bool {
        self.children.iter().any(|n| matches!(n, Node::CData(_)))
    }
}

/// The parse tree, in one arena: names and attribute values borrow from the input where they
/// need no unescaping, and nodes and attributes live in two flat vectors, so reading a large
/// file allocates little. [`Raw::owned`] makes an [`Element`] of what the model keeps verbatim.
#[derive(Debug, Default)]
pub(crate) struct Doc<'a> {
    nodes: Vec<NodeData<'a>>,
    attrs: Vec<(&'a str, Cow<'a, str>)>,
}

#[derive(Debug)]
struct NodeData<'a> {
    kind: Kind<'a>,
    first_child: u32,
    next_sibling: u32,
}

#[derive(Debug)]
enum Kind<'a> {
    Element { name: &'a str, pos: u32, attrs: (u32, u32) },
    Text(String),
    CData(String),
}

const NONE: u32 = u32::MAX;

/// Deepest element nesting read, counting the root as 1. OpenDRIVE's own elements nest at most
/// 8 deep (OpenDRIVE/road/lanes/laneSection/right/lane/link/successor), vendor userData a few
/// more; 256 is far above any real map and keeps every recursion over a read tree (copying,
/// comparing, printing) well within the smallest thread stack.
pub const MAX_DEPTH: usize = 256;

/// Average bytes of file per element below which a file is refused: [`element_limit`]. The
/// sample maps have 38 to 150 bytes per element; 8 bytes is `<a></a>` with its line break.
pub const MIN_BYTES_PER_ELEMENT: usize = 8;

/// Most elements a text of `len` bytes may hold: one per [`MIN_BYTES_PER_ELEMENT`] bytes, plus
/// 256 for tiny files. This bounds the memory of the parse tree and of the elements the model
/// keeps verbatim (about 120 bytes each together) to about 15 times the file's size.
pub fn element_limit(len: usize) -> usize {
    256 + len / MIN_BYTES_PER_ELEMENT
}

/// An element open during parsing.
struct Open<'a> {
    index: u32,
    name: &'a str,
    pos: usize,
    last_child: u32,
}

impl<'a> Doc<'a> {
    /// The root element (the document's first node).
    pub fn root(&self) -> Raw<'_> {
        self.element(0)
    }

    fn element(&self, index: u32) -> Raw<'_> {
        match &self.nodes[index as usize].kind {
            Kind::Element { name, pos, attrs } => Raw {
                name,
                pos: *pos as usize,
                attributes: &self.attrs[attrs.0 as usize..attrs.1 as usize],
                doc: self,
                index,
            },
            // Only element indices are handed out.
            _ => Raw { name: "", pos: 0, attributes: &[], doc: self, index },
        }
    }

    /// Appends a node as the last child of `parent` (whose last child so far the caller keeps).
    fn push(&mut self, kind: Kind<'a>, parent: Option<&mut Open<'a>>) -> u32 {
        let idx = self.nodes.len() as u32;
        self.nodes.push(NodeData { kind, first_child: NONE, next_sibling: NONE });
        if let Some(p) = parent {
            if p.last_child == NONE {
                self.nodes[p.index as usize].first_child = idx;
            } else {
                self.nodes[p.last_child as usize].next_sibling = idx;
            }
            p.last_child = idx;
        }
        idx
    }
}

/// A view of one element of a [`Doc`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw<'a> {
    pub name: &'a str,
    /// Byte offset of the `<` in the source.
    pub pos: usize,
    pub attributes: &'a [(&'a str, Cow<'a, str>)],
    doc: &'a Doc<'a>,
    index: u32,
}

impl<'a> Raw<'a> {
    fn child_indices(&self) -> impl Iterator<Item = u32> + 'a {
        let nodes = &self.doc.nodes;
        let mut next = nodes[self.index as usize].first_child;
        std::iter::from_fn(move || {
            if next == NONE {
                return None;
            }
            let cur = next;
            next = nodes[cur as usize].next_sibling;
            Some(cur)
        })
    }

    pub fn elements(&self) -> impl Iterator<Item = Raw<'a>> + 'a {
        let doc = self.doc;
        self.child_indices()
            .filter(move |&i| matches!(doc.nodes[i as usize].kind, Kind::Element { .. }))
            .map(move |i| doc.element(i))
    }

    /// Concatenated text and CDATA content.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for i in self.child_indices() {
            if let Kind::Text(t) | Kind::CData(t) = &self.doc.nodes[i as usize].kind {
                s.push_str(t);
            }
        }
        s
    }

    pub fn owned_attributes(&self) -> Vec<(String, String)> {
        self.attributes.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// An owned copy, for keeping in the model.
    /// Recurses once per level: at most [`MAX_DEPTH`] deep. Vectors are sized exactly (no
    /// growth slack: the copy of a file's elements costs what they hold).
    pub fn owned(&self) -> Element {
        let mut children = Vec::with_capacity(self.child_indices().count());
        children.extend(self.child_indices().map(|i| match &self.doc.nodes[i as usize].kind {
            Kind::Element { .. } => Node::Element(self.doc.element(i).owned()),
            Kind::Text(t) => Node::Text(t.clone()),
            Kind::CData(t) => Node::CData(t.clone()),
        }));
        Element { name: self.name.to_string(), attributes: self.owned_attributes(), children }
    }
}

/// How often `byte` occurs in `text`.
fn memchr_count(text: &str, byte: u8) -> usize {
    text.as_bytes().iter().filter(|&&b| b == byte).count()
}

/// The part of `text` that `bytes` is a view of, if it is one.
fn within<'a>(text: &'a str, bytes: &[u8]) -> Option<&'a str> {
    let base = text.as_ptr() as usize;
    let start = bytes.as_ptr() as usize;
    let off = start.checked_sub(base)?;
    text.get(off..off.checked_add(bytes.len())?)
}

/// The first character of `s` that XML 1.0 does not allow in a document (its `Char`
/// production): the C0 control characters but tab, line feed and carriage return (NUL among
/// them), and U+FFFE and U+FFFF. Returns its byte offset in `s` and the character. A byte
/// scan: the control characters are single bytes in UTF-8, U+FFFE and U+FFFF are EF BF BE/BF.
pub(crate) fn forbidden_char(s: &str) -> Option<(usize, char)> {
    let b = s.as_bytes();
    b.iter().enumerate().find_map(|(i, &c)| match c {
        0x00..=0x08 | 0x0B | 0x0C | 0x0E..=0x1F => Some((i, char::from(c))),
        0xEF if b.get(i + 1) == Some(&0xBF) && matches!(b.get(i + 2), Some(0xBE | 0xBF)) => {
            Some((i, if b[i + 2] == 0xBE { '\u{FFFE}' } else { '\u{FFFF}' }))
        }
        _ => None,
    })
}

/// Why a character [`forbidden_char`] found is an error.
pub(crate) fn forbidden_message(c: char) -> String {
    let name = if c == '\0' { " (NUL)" } else { "" };
    format!("character U+{:04X}{name} is not allowed in XML 1.0", c as u32)
}

/// Parses a document into its root element. Comments, processing instructions, the XML
/// declaration and a DOCTYPE are skipped wherever they stand (Town07 has a comment before the
/// declaration, which libOpenDRIVE accepts and so do we).
pub(crate) fn parse(text: &str) -> Result<Doc<'_>, Error> {
    let mut reader = quick_xml::Reader::from_str(text);
    let config = reader.config_mut();
    config.trim_text(false);
    config.check_end_names = true;
    config.expand_empty_elements = false;

    let xml_err = |at: usize, msg: String| Error::at(ErrorKind::Xml(msg), Position::locate(text, at));

    if u32::try_from(text.len()).is_err() {
        return Err(Error::new(ErrorKind::Limit(format!(
            "the file is {} bytes long; OpenDRIVE files of 4 GiB or more are not read",
            text.len()
        ))));
    }
    if let Some((at, c)) = forbidden_char(text) {
        return Err(xml_err(at, forbidden_message(c)));
    }
    let limit = element_limit(text.len());
    // Start tags: a '<' before a name's first character (comments, declarations and end tags
    // excluded), an upper bound of the elements; text nodes are rare in OpenDRIVE.
    let tags = text
        .as_bytes()
        .windows(2)
        .filter(|w| w[0] == b'<' && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] >= 0x80))
        .count();
    let mut doc = Doc {
        nodes: Vec::with_capacity(tags.min(limit) + 1),
        attrs: Vec::with_capacity(memchr_count(text, b'=').min(text.len() / 24)),
    };
    let mut elements = 0usize;
    let mut stack: Vec<Open> = Vec::new();
    let mut have_root = false;
    loop {
        let pos = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => return Err(xml_err(reader.error_position() as usize, e.to_string())),
        };
        let is_empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(start) | Event::Empty(start) => {
                let name_bytes = start.name().into_inner();
                let name = within(text, name_bytes).ok_or_else(|| xml_err(pos, "element name is not text".into()))?;
                if stack.len() >= MAX_DEPTH {
                    return Err(Error::at(
                        ErrorKind::Limit(format!(
                            "<{name}> is nested {} elements deep; more than {MAX_DEPTH} is not read",
                            stack.len() + 1
                        )),
                        Position::locate(text, pos),
                    ));
                }
                elements += 1;
                if elements > limit {
                    return Err(Error::at(
                        ErrorKind::Limit(format!(
                            "more than {limit} elements in {} bytes (at most one per {MIN_BYTES_PER_ELEMENT} bytes \
                             on average is read)",
                            text.len()
                        )),
                        Position::locate(text, pos),
                    ));
                }
                if stack.is_empty() {
                    if have_root {
                        return Err(xml_err(pos, format!("second root element <{name}>")));
                    }
                    have_root = true;
                }
                let a0 = doc.attrs.len() as u32;
                for attr in start.attributes().with_checks(true) {
                    let attr = attr.map_err(|e| xml_err(pos, e.to_string()))?;
                    let key = within(text, attr.key.into_inner())
                        .ok_or_else(|| xml_err(pos, "attribute name is not text".into()))?;
                    let raw =
                        within(text, &attr.value).ok_or_else(|| xml_err(pos, "attribute value is not text".into()))?;
                    let value = if raw.contains('&') {
                        let v = quick_xml::escape::unescape(raw).map_err(|e| xml_err(pos, e.to_string()))?;
                        // A character reference (&#1;) may not name a forbidden character either.
                        if let Some((_, c)) = forbidden_char(&v) {
                            return Err(xml_err(pos, format!("attribute {key}: {}", forbidden_message(c))));
                        }
                        Cow::Owned(v.into_owned())
                    } else {
                        Cow::Borrowed(raw)
                    };
                    doc.attrs.push((key, value));
                }
                let a1 = doc.attrs.len() as u32;
                // pos < text.len() <= u32::MAX, checked above.
                let idx = doc.push(Kind::Element { name, pos: pos as u32, attrs: (a0, a1) }, stack.last_mut());
                // An empty element closes at once; a start element waits for its end.
                if !is_empty {
                    stack.push(Open { index: idx, name, pos, last_child: NONE });
                }
            }
            Event::End(_) => {
                stack.pop().ok_or_else(|| xml_err(pos, "unexpected end tag".into()))?;
            }
            Event::Text(t) => {
                // Whitespace between elements is formatting: skip it before unescaping.
                if t.iter().all(|b| b.is_ascii_whitespace()) {
                    continue;
                }
                let s = t.unescape().map_err(|e| xml_err(pos, e.to_string()))?;
                if let Some((_, c)) = forbidden_char(&s) {
                    return Err(xml_err(pos, forbidden_message(c)));
                }
                match stack.last_mut() {
                    Some(parent) => {
                        doc.push(Kind::Text(s.into_owned()), Some(parent));
                    }
                    None => return Err(xml_err(pos, "text outside the root element".into())),
                }
            }
            Event::CData(c) => {
                let s = String::from_utf8_lossy(&c.into_inner()).into_owned();
                if let Some(parent) = stack.last_mut() {
                    doc.push(Kind::CData(s), Some(parent));
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(xml_err(open.pos, format!("<{}> is never closed (the file ends first)", open.name)));
    }
    if !have_root {
        return Err(xml_err(0, "no root element".into()));
    }
    Ok(doc)
}
