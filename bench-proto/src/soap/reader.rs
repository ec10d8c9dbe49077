//! A bounded pull reader over a SOAP message (opened by `envelope.rs`) that lets a service walk the Body
//! element by element. Namespaces are resolved by URI with quick-xml's `NsReader`, so any prefix (or the
//! default namespace) works; depth is bounded by `MAX_DEPTH`.

use std::borrow::Cow;

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

use super::{SoapError, MAX_DEPTH};
use crate::xsd::{self, XsdError};

/// A start tag just read. Its namespace declarations stay in scope until the next read, so resolve its
/// namespace (with [`BodyReader::is_in`]) before reading on.
#[derive(Debug)]
pub struct Element<'a> {
    pub(super) start: BytesStart<'a>,
}

impl Element<'_> {
    /// The local name (without prefix).
    pub fn local_name(&self) -> &[u8] {
        self.start.local_name().into_inner()
    }

    pub(super) fn describe(&self) -> String {
        String::from_utf8_lossy(self.start.name().as_ref()).into_owned()
    }
}

/// Reads a SOAP 1.1 message from a byte slice without copying text that needs no unescaping.
#[derive(Debug)]
pub struct BodyReader<'a> {
    pub(super) r: NsReader<&'a [u8]>,
    /// Elements open around the current position (Envelope = 1).
    pub(super) depth: usize,
}

pub(super) fn is_blank(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
}

impl<'a> BodyReader<'a> {
    pub(super) fn xml_error(&self, msg: &str) -> SoapError {
        SoapError::Xml {
            pos: self.r.buffer_position(),
            msg: msg.to_owned(),
        }
    }

    pub(super) fn event(&mut self) -> Result<Event<'a>, SoapError> {
        self.r.read_event().map_err(|e| SoapError::Xml {
            pos: self.r.error_position(),
            msg: e.to_string(),
        })
    }

    /// True if `el` resolves to namespace `ns` (`""` meaning no namespace).
    pub fn is_in(&self, el: &Element<'_>, ns: &str) -> bool {
        match self.r.resolve_element(el.start.name()).0 {
            ResolveResult::Bound(n) => n.as_ref() == ns.as_bytes(),
            ResolveResult::Unbound => ns.is_empty(),
            ResolveResult::Unknown(_) => false,
        }
    }

    /// The namespace of `el` as text, for error messages.
    pub fn namespace_of(&self, el: &Element<'_>) -> String {
        match self.r.resolve_element(el.start.name()).0 {
            ResolveResult::Bound(n) => String::from_utf8_lossy(n.as_ref()).into_owned(),
            ResolveResult::Unbound => String::new(),
            ResolveResult::Unknown(p) => {
                format!("(undeclared prefix '{}')", String::from_utf8_lossy(&p))
            }
        }
    }

    /// The unescaped value of the attribute `name` (in no namespace) of `el`, if present.
    pub fn attribute(&self, el: &Element<'a>, name: &str) -> Result<Option<String>, SoapError> {
        for attr in el.start.attributes() {
            let attr = attr.map_err(|e| self.xml_error(&e.to_string()))?;
            if attr.key.as_ref() == name.as_bytes() {
                let value = attr
                    .unescape_value()
                    .map_err(|e| self.xml_error(&e.to_string()))?;
                xsd::check_chars(&value).map_err(|c| SoapError::InvalidContent {
                    field: format!("@{name}"),
                    reason: format!("character U+{:04X} is not allowed in XML", u32::from(c)),
                })?;
                return Ok(Some(value.into_owned()));
            }
        }
        Ok(None)
    }

    /// The next child element of the current element, or `None` once its end tag is consumed.
    pub fn next_child(&mut self) -> Result<Option<Element<'a>>, SoapError> {
        loop {
            match self.event()? {
                Event::Start(start) => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return Err(SoapError::TooDeep);
                    }
                    return Ok(Some(Element { start }));
                }
                Event::End(_) => {
                    self.depth = self.depth.saturating_sub(1);
                    return Ok(None);
                }
                Event::Text(t) if is_blank(&t) => {}
                Event::Text(_) | Event::CData(_) => {
                    return Err(SoapError::UnexpectedText(String::new()))
                }
                Event::Comment(_) | Event::PI(_) => {}
                Event::DocType(_) => return Err(SoapError::Doctype),
                Event::Eof => return Err(self.xml_error("unexpected end of document")),
                Event::Decl(_) | Event::Empty(_) => return Err(self.xml_error("unexpected markup")),
            }
        }
    }

    /// Reads the next child, which must be `{ns}name`. Errors have an empty path: callers add `name`.
    pub fn child(
        &mut self,
        ns: &'static str,
        name: &'static str,
    ) -> Result<Element<'a>, SoapError> {
        let Some(el) = self.next_child()? else {
            return Err(SoapError::MissingField(String::new()));
        };
        if el.local_name() != name.as_bytes() {
            return Err(SoapError::UnexpectedElement {
                path: String::new(),
                found: el.describe(),
                expected: Some(name),
            });
        }
        if !self.is_in(&el, ns) {
            return Err(SoapError::WrongNamespace {
                path: String::new(),
                expected: ns,
                found: self.namespace_of(&el),
            });
        }
        Ok(el)
    }

    /// The error for a child element that should not be there.
    pub fn unexpected(&self, el: &Element<'_>) -> SoapError {
        SoapError::UnexpectedElement {
            path: String::new(),
            found: el.describe(),
            expected: None,
        }
    }

    /// Consumes the end of the current element, refusing any further child.
    pub fn end(&mut self) -> Result<(), SoapError> {
        match self.next_child()? {
            None => Ok(()),
            Some(el) => Err(self.unexpected(&el)),
        }
    }

    /// The text content of the current element (which must have no child elements), up to its end tag.
    /// Entities and character references are expanded; CDATA is taken as is.
    pub fn text(&mut self) -> Result<Cow<'a, str>, SoapError> {
        let mut text: Cow<'a, str> = Cow::Borrowed("");
        loop {
            let piece: Cow<'a, str> = match self.event()? {
                Event::Text(t) => t.unescape().map_err(|e| self.xml_error(&e.to_string()))?,
                Event::CData(c) => match c.into_inner() {
                    Cow::Borrowed(b) => Cow::Borrowed(
                        std::str::from_utf8(b).map_err(|e| self.xml_error(&e.to_string()))?,
                    ),
                    Cow::Owned(b) => Cow::Owned(
                        String::from_utf8(b).map_err(|e| self.xml_error(&e.to_string()))?,
                    ),
                },
                Event::End(_) => {
                    self.depth = self.depth.saturating_sub(1);
                    break;
                }
                Event::Start(start) => {
                    self.depth += 1;
                    return Err(self.unexpected(&Element { start }));
                }
                Event::Comment(_) | Event::PI(_) => continue,
                Event::DocType(_) => return Err(SoapError::Doctype),
                Event::Eof => return Err(self.xml_error("unexpected end of document")),
                Event::Decl(_) | Event::Empty(_) => return Err(self.xml_error("unexpected markup")),
            };
            if text.is_empty() {
                text = piece;
            } else {
                text.to_mut().push_str(&piece);
            }
        }
        xsd::check_chars(&text).map_err(|c| SoapError::InvalidContent {
            field: String::new(),
            reason: format!("character U+{:04X} is not allowed in XML", u32::from(c)),
        })?;
        Ok(text)
    }

    /// The text of the current element as an xsd:QName, its prefix resolved through the declarations in
    /// scope at that element.
    pub fn qname(&mut self) -> Result<xsd::QName, SoapError> {
        let text = self.text()?;
        let invalid = |reason| SoapError::InvalidField {
            field: String::new(),
            reason,
        };
        let (prefix, local) = xsd::QName::split_lexical(&text).map_err(invalid)?;
        // The end tag was just read, but quick-xml keeps the element's scope until the next read.
        let lexical = xsd::collapse(&text);
        let namespace = match self
            .r
            .resolve_element(quick_xml::name::QName(lexical.as_bytes()))
            .0
        {
            ResolveResult::Bound(n) => String::from_utf8_lossy(n.as_ref()).into_owned(),
            ResolveResult::Unbound => String::new(),
            ResolveResult::Unknown(_) => {
                let why = if prefix.is_some() {
                    "undeclared prefix"
                } else {
                    "unresolvable"
                };
                return Err(invalid(XsdError::because("QName", &text, why)));
            }
        };
        Ok(xsd::QName {
            namespace,
            local: local.to_owned(),
        })
    }

    /// All text inside the current element, its descendants' included, up to its end tag.
    pub fn deep_text(&mut self) -> Result<String, SoapError> {
        let mut text = String::new();
        self.consume_rest(Some(&mut text))?;
        Ok(text)
    }

    /// Skips the rest of the current element, children included (depth still bounded).
    pub fn skip(&mut self) -> Result<(), SoapError> {
        self.consume_rest(None)
    }

    fn consume_rest(&mut self, mut text: Option<&mut String>) -> Result<(), SoapError> {
        let target = self.depth.saturating_sub(1);
        while self.depth > target {
            match self.event()? {
                Event::Start(_) => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return Err(SoapError::TooDeep);
                    }
                }
                Event::End(_) => self.depth = self.depth.saturating_sub(1),
                Event::Text(t) => {
                    if let Some(text) = text.as_deref_mut() {
                        text.push_str(&t.unescape().map_err(|e| self.xml_error(&e.to_string()))?);
                    }
                }
                Event::CData(c) => {
                    if let Some(text) = text.as_deref_mut() {
                        text.push_str(&String::from_utf8_lossy(&c));
                    }
                }
                Event::DocType(_) => return Err(SoapError::Doctype),
                Event::Eof => return Err(self.xml_error("unexpected end of document")),
                _ => {}
            }
        }
        Ok(())
    }
}
