//! A small XML tree: the reader parses into it (with byte positions for error messages), the
//! model keeps unknown elements as it, and the writer prints it back.

use crate::error::{Error, ErrorKind, Position};
use quick_xml::events::Event;

/// An XML element kept verbatim (unknown elements, `userData`, vendor extensions).
#[derive(Debug, Clone, Default)]
pub struct Element {
    /// Tag name.
    pub name: String,
    /// Attributes in document order, values unescaped.
    pub attributes: Vec<(String, String)>,
    /// Child nodes; whitespace between elements is not kept.
    pub children: Vec<Node>,
    /// Byte offset of the `<` in the source; not part of equality.
    pub(crate) pos: usize,
}

impl PartialEq for Element {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.attributes == other.attributes && self.children == other.children
    }
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

impl Element {
    /// A new element with a name and no content.
    pub fn new(name: impl Into<String>) -> Self {
        Element { name: name.into(), ..Default::default() }
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

/// Parses a document into its root element. Comments, processing instructions, the XML
/// declaration and a DOCTYPE are skipped wherever they stand (Town07 has a comment before the
/// declaration, which libOpenDRIVE accepts and so do we).
pub(crate) fn parse(text: &str) -> Result<Element, Error> {
    let mut reader = quick_xml::Reader::from_str(text);
    let config = reader.config_mut();
    config.trim_text(false);
    config.check_end_names = true;
    config.expand_empty_elements = false;

    let err_at = |reader: &quick_xml::Reader<&[u8]>, msg: String| {
        let at = reader.error_position() as usize;
        Error::at(ErrorKind::Xml(msg), Position::locate(text, at))
    };

    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let pos = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => return Err(err_at(&reader, e.to_string())),
        };
        let is_empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(start) | Event::Empty(start) => {
                let mut el = Element { name: decode_name(start.name().as_ref()), pos, ..Default::default() };
                for attr in start.attributes().with_checks(true) {
                    let attr =
                        attr.map_err(|e| Error::at(ErrorKind::Xml(e.to_string()), Position::locate(text, pos)))?;
                    let value = attr
                        .unescape_value()
                        .map_err(|e| Error::at(ErrorKind::Xml(e.to_string()), Position::locate(text, pos)))?;
                    el.attributes.push((decode_name(attr.key.as_ref()), value.into_owned()));
                }
                // An empty element closes at once; a start element waits for its end.
                if is_empty {
                    close(el, &mut stack, &mut root, text)?;
                } else {
                    stack.push(el);
                }
            }
            Event::End(_) => {
                let el = stack.pop().ok_or_else(|| {
                    Error::at(ErrorKind::Xml("unexpected end tag".into()), Position::locate(text, pos))
                })?;
                close(el, &mut stack, &mut root, text)?;
            }
            Event::Text(t) => {
                let s =
                    t.unescape().map_err(|e| Error::at(ErrorKind::Xml(e.to_string()), Position::locate(text, pos)))?;
                match stack.last_mut() {
                    Some(parent) => {
                        if !s.trim().is_empty() {
                            parent.children.push(Node::Text(s.into_owned()));
                        }
                    }
                    None => {
                        if !s.trim().is_empty() {
                            return Err(Error::at(
                                ErrorKind::Xml("text outside the root element".into()),
                                Position::locate(text, pos),
                            ));
                        }
                    }
                }
            }
            Event::CData(c) => {
                let s = String::from_utf8_lossy(&c.into_inner()).into_owned();
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(Node::CData(s));
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(Error::at(
            ErrorKind::Xml(format!("<{}> is never closed (the file ends first)", open.name)),
            Position::locate(text, open.pos),
        ));
    }
    root.ok_or_else(|| Error::at(ErrorKind::Xml("no root element".into()), Position::locate(text, 0)))
}

fn close(el: Element, stack: &mut [Element], root: &mut Option<Element>, text: &str) -> Result<(), Error> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(Node::Element(el)),
        None => {
            if root.is_some() {
                return Err(Error::at(
                    ErrorKind::Xml(format!("second root element <{}>", el.name)),
                    Position::locate(text, el.pos),
                ));
            }
            *root = Some(el);
        }
    }
    Ok(())
}

fn decode_name(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
