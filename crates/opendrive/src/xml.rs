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

/// The parse tree: names and attribute values borrow from the input where they need no
/// unescaping, so reading a large file allocates little; [`Raw::owned`] makes an [`Element`]
/// of what the model keeps verbatim.
#[derive(Debug)]
pub(crate) struct Raw<'a> {
    pub name: &'a str,
    pub attributes: Vec<(&'a str, Cow<'a, str>)>,
    pub children: Vec<RawNode<'a>>,
    /// Byte offset of the `<` in the source.
    pub pos: usize,
}

#[derive(Debug)]
pub(crate) enum RawNode<'a> {
    Element(Raw<'a>),
    Text(String),
    CData(String),
}

impl<'a> Raw<'a> {
    pub fn elements(&self) -> impl Iterator<Item = &Raw<'a>> {
        self.children.iter().filter_map(|n| match n {
            RawNode::Element(e) => Some(e),
            _ => None,
        })
    }

    /// Concatenated text and CDATA content.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for n in &self.children {
            match n {
                RawNode::Text(t) | RawNode::CData(t) => s.push_str(t),
                RawNode::Element(_) => {}
            }
        }
        s
    }

    pub fn owned_attributes(&self) -> Vec<(String, String)> {
        self.attributes.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// An owned copy, for keeping in the model.
    pub fn owned(&self) -> Element {
        Element {
            name: self.name.to_string(),
            attributes: self.owned_attributes(),
            children: self
                .children
                .iter()
                .map(|n| match n {
                    RawNode::Element(e) => Node::Element(e.owned()),
                    RawNode::Text(t) => Node::Text(t.clone()),
                    RawNode::CData(t) => Node::CData(t.clone()),
                })
                .collect(),
        }
    }
}

/// The part of `text` that `bytes` is a view of, if it is one.
fn within<'a>(text: &'a str, bytes: &[u8]) -> Option<&'a str> {
    let base = text.as_ptr() as usize;
    let start = bytes.as_ptr() as usize;
    let off = start.checked_sub(base)?;
    text.get(off..off.checked_add(bytes.len())?)
}

/// Parses a document into its root element. Comments, processing instructions, the XML
/// declaration and a DOCTYPE are skipped wherever they stand (Town07 has a comment before the
/// declaration, which libOpenDRIVE accepts and so do we).
pub(crate) fn parse(text: &str) -> Result<Raw<'_>, Error> {
    let mut reader = quick_xml::Reader::from_str(text);
    let config = reader.config_mut();
    config.trim_text(false);
    config.check_end_names = true;
    config.expand_empty_elements = false;

    let xml_err = |at: usize, msg: String| Error::at(ErrorKind::Xml(msg), Position::locate(text, at));

    let mut stack: Vec<Raw> = Vec::new();
    let mut root: Option<Raw> = None;
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
                let mut el = Raw { name, attributes: Vec::new(), children: Vec::new(), pos };
                for attr in start.attributes().with_checks(true) {
                    let attr = attr.map_err(|e| xml_err(pos, e.to_string()))?;
                    let key = within(text, attr.key.into_inner())
                        .ok_or_else(|| xml_err(pos, "attribute name is not text".into()))?;
                    let raw =
                        within(text, &attr.value).ok_or_else(|| xml_err(pos, "attribute value is not text".into()))?;
                    let value = if raw.contains('&') {
                        Cow::Owned(
                            quick_xml::escape::unescape(raw).map_err(|e| xml_err(pos, e.to_string()))?.into_owned(),
                        )
                    } else {
                        Cow::Borrowed(raw)
                    };
                    el.attributes.push((key, value));
                }
                // An empty element closes at once; a start element waits for its end.
                if is_empty {
                    close(el, &mut stack, &mut root, text)?;
                } else {
                    stack.push(el);
                }
            }
            Event::End(_) => {
                let el = stack.pop().ok_or_else(|| xml_err(pos, "unexpected end tag".into()))?;
                close(el, &mut stack, &mut root, text)?;
            }
            Event::Text(t) => {
                // Whitespace between elements is formatting: skip it before unescaping.
                if t.iter().all(|b| b.is_ascii_whitespace()) {
                    continue;
                }
                let s = t.unescape().map_err(|e| xml_err(pos, e.to_string()))?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(RawNode::Text(s.into_owned())),
                    None => return Err(xml_err(pos, "text outside the root element".into())),
                }
            }
            Event::CData(c) => {
                let s = String::from_utf8_lossy(&c.into_inner()).into_owned();
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(RawNode::CData(s));
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(xml_err(open.pos, format!("<{}> is never closed (the file ends first)", open.name)));
    }
    root.ok_or_else(|| xml_err(0, "no root element".into()))
}

fn close<'a>(el: Raw<'a>, stack: &mut [Raw<'a>], root: &mut Option<Raw<'a>>, text: &str) -> Result<(), Error> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(RawNode::Element(el)),
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
