//! The shape every portal document has: one root element in [`super::NS`] with unqualified attributes,
//! holding unqualified leaf elements, each at most once. Read with quick-xml (well-formedness, references),
//! bounded by the document's size (the caller's) and [`MAX_FIELDS`].

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

use super::NS;

/// Most leaf elements a document may hold.
const MAX_FIELDS: usize = 16;

/// Why a document is not a valid order (or reply): the first thing wrong, in words a client can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error("not well-formed XML: {0}")]
    Xml(String),
    #[error("the document is not UTF-8")]
    NotUtf8,
    #[error("the root element {0} is not a portal document in {NS}")]
    Root(String),
    #[error("<{0}> may not hold elements")]
    Nested(String),
    #[error("unexpected {0}")]
    Unexpected(String),
    #[error("<{0}> given twice")]
    Repeated(String),
    #[error("more than {MAX_FIELDS} fields")]
    TooManyFields,
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("{field}: {why} (got {got:?})")]
    Invalid {
        field: &'static str,
        why: &'static str,
        got: String,
    },
}

/// A document read: the root's local name, its attributes and its fields, as written (unescaped).
#[derive(Debug, Default)]
pub(crate) struct Flat {
    pub(crate) root: String,
    pub(crate) attrs: Vec<(String, String)>,
    pub(crate) fields: Vec<(String, String)>,
}

impl Flat {
    /// Takes the attribute `name` out, or says it is missing.
    pub(crate) fn attr(&mut self, name: &'static str) -> Result<String, OrderError> {
        take(&mut self.attrs, name)
    }

    /// Takes the field `name` out, or says it is missing.
    pub(crate) fn field(&mut self, name: &'static str) -> Result<String, OrderError> {
        take(&mut self.fields, name)
    }

    /// Refuses whatever was not taken.
    pub(crate) fn done(self) -> Result<(), OrderError> {
        if let Some((name, _)) = self.attrs.first() {
            return Err(OrderError::Unexpected(format!("attribute {name}")));
        }
        if let Some((name, _)) = self.fields.first() {
            return Err(OrderError::Unexpected(format!("element <{name}>")));
        }
        Ok(())
    }
}

fn take(list: &mut Vec<(String, String)>, name: &'static str) -> Result<String, OrderError> {
    let at = list
        .iter()
        .position(|(n, _)| n == name)
        .ok_or(OrderError::Missing(name))?;
    Ok(list.swap_remove(at).1)
}

fn xml(e: impl std::fmt::Display) -> OrderError {
    OrderError::Xml(e.to_string())
}

/// Reads a portal document.
pub(crate) fn read(bytes: &[u8]) -> Result<Flat, OrderError> {
    let text = std::str::from_utf8(bytes).map_err(|_| OrderError::NotUtf8)?;
    let mut reader = NsReader::from_str(text);
    let mut flat = Flat::default();
    let mut open: Option<String> = None;
    let mut text = String::new();
    let mut depth = 0usize;
    loop {
        let (ns, event) = reader.read_resolved_event().map_err(xml)?;
        match event {
            Event::Start(e) if depth == 0 && flat.root.is_empty() => {
                root(&mut flat, &ns, &e)?;
                depth = 1;
            }
            Event::Empty(e) if depth == 0 && flat.root.is_empty() => root(&mut flat, &ns, &e)?,
            Event::Start(e) if depth == 1 => {
                let name = leaf_name(&ns, e.local_name().as_ref())?;
                open = Some(name);
                text.clear();
                depth = 2;
            }
            Event::Empty(e) if depth == 1 => {
                let name = leaf_name(&ns, e.local_name().as_ref())?;
                push_field(&mut flat, name, String::new())?;
            }
            Event::Start(_) | Event::Empty(_) => {
                let parent = open.clone().unwrap_or_else(|| flat.root.clone());
                return Err(OrderError::Nested(parent));
            }
            Event::Text(t) if depth == 2 => text.push_str(&t.unescape().map_err(xml)?),
            Event::CData(t) if depth == 2 => {
                text.push_str(std::str::from_utf8(&t).map_err(|_| OrderError::NotUtf8)?);
            }
            Event::Text(t) => {
                if !t.iter().all(u8::is_ascii_whitespace) {
                    return Err(OrderError::Unexpected("text outside the fields".into()));
                }
            }
            Event::End(_) if depth == 2 => {
                let name = open.take().unwrap_or_default();
                push_field(&mut flat, name, std::mem::take(&mut text))?;
                depth = 1;
            }
            Event::End(_) => depth = 0,
            Event::Decl(_) | Event::Comment(_) => {}
            Event::Eof if flat.root.is_empty() => {
                return Err(OrderError::Missing("the root element"))
            }
            Event::Eof => return Err(xml(format!("<{}> is not closed", flat.root))),
            Event::CData(_) => {
                return Err(OrderError::Unexpected("CDATA outside the fields".into()))
            }
            Event::DocType(_) | Event::PI(_) => {
                return Err(OrderError::Unexpected(
                    "a DOCTYPE or processing instruction".into(),
                ))
            }
        }
        if depth == 0 && !flat.root.is_empty() {
            return trailing(&mut reader).map(|()| flat);
        }
    }
}

/// The root element: in the portal's namespace, its attributes unqualified and each once.
fn root(flat: &mut Flat, ns: &ResolveResult<'_>, e: &BytesStart<'_>) -> Result<(), OrderError> {
    let local = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
    if !matches!(ns, ResolveResult::Bound(n) if n.as_ref() == NS.as_bytes()) {
        return Err(OrderError::Root(local));
    }
    for a in e.attributes() {
        let a = a.map_err(xml)?;
        let key = a.key;
        if key.as_namespace_binding().is_some() {
            continue;
        }
        let name = String::from_utf8_lossy(key.as_ref()).into_owned();
        if key.prefix().is_some() {
            return Err(OrderError::Unexpected(format!("attribute {name}")));
        }
        let value = a.unescape_value().map_err(xml)?.into_owned();
        flat.attrs.push((name, value));
    }
    flat.root = local;
    Ok(())
}

/// After the root: only comments and white space.
fn trailing(reader: &mut NsReader<&[u8]>) -> Result<(), OrderError> {
    loop {
        match reader.read_event().map_err(xml)? {
            Event::Eof => return Ok(()),
            Event::Comment(_) => {}
            Event::Text(t) if t.iter().all(u8::is_ascii_whitespace) => {}
            _ => {
                return Err(OrderError::Unexpected(
                    "content after the root element".into(),
                ))
            }
        }
    }
}

fn leaf_name(ns: &ResolveResult<'_>, local: &[u8]) -> Result<String, OrderError> {
    let name = String::from_utf8_lossy(local).into_owned();
    if !matches!(ns, ResolveResult::Unbound) {
        return Err(OrderError::Unexpected(format!(
            "element <{name}> in a namespace (fields are unqualified)"
        )));
    }
    Ok(name)
}

fn push_field(flat: &mut Flat, name: String, value: String) -> Result<(), OrderError> {
    if flat.fields.iter().any(|(n, _)| *n == name) {
        return Err(OrderError::Repeated(name));
    }
    if flat.fields.len() == MAX_FIELDS {
        return Err(OrderError::TooManyFields);
    }
    flat.fields.push((name, value));
    Ok(())
}

/// Writes `<ossj:{root} xmlns:ossj=NS a="…">` with the attributes escaped.
pub(crate) fn open_root(out: &mut Vec<u8>, root: &str, attrs: &[(&str, &str)]) {
    out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ossj:");
    out.extend_from_slice(root.as_bytes());
    out.extend_from_slice(b" xmlns:ossj=\"");
    out.extend_from_slice(NS.as_bytes());
    out.push(b'"');
    for (name, value) in attrs {
        out.push(b' ');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"=\"");
        escape(out, value);
        out.push(b'"');
    }
    out.push(b'>');
}

/// Writes `<name>value</name>` with the value escaped.
pub(crate) fn leaf(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(b'<');
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
    escape(out, value);
    out.extend_from_slice(b"</");
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

pub(crate) fn close_root(out: &mut Vec<u8>, root: &str) {
    out.extend_from_slice(b"</ossj:");
    out.extend_from_slice(root.as_bytes());
    out.extend_from_slice(b">\n");
}

fn escape(out: &mut Vec<u8>, s: &str) {
    for b in s.bytes() {
        match b {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(b),
        }
    }
}

/// An identifier: 1 to 64 of `A-Z a-z 0-9 - _ .`.
pub(crate) fn identifier(field: &'static str, s: String) -> Result<String, OrderError> {
    let ok = (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(s)
    } else {
        Err(OrderError::Invalid {
            field,
            why: "1 to 64 of A-Z a-z 0-9 - _ .",
            got: s,
        })
    }
}

/// A customer id: a positive xsd:unsignedLong.
pub(crate) fn customer_id(s: String) -> Result<u64, OrderError> {
    match s.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(OrderError::Invalid {
            field: "customerId",
            why: "a positive integer",
            got: s,
        }),
    }
}
