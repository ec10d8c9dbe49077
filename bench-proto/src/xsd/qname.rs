//! xsd:QName as an expanded name `{namespace}local`. The prefix of the lexical form is resolved by the reader
//! (it needs the in-scope namespace declarations); writing declares a prefix on the element itself.

use std::borrow::Cow;
use std::fmt;

use super::{collapse, write_attr, write_text, XsdError};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QName<'a> {
    /// The namespace URI; empty for a name in no namespace.
    pub namespace: Cow<'a, str>,
    pub local: Cow<'a, str>,
}

/// NCName check: ASCII name characters exactly; any non-ASCII letter is let through (the full Unicode name
/// classes buy nothing here).
fn is_ncname(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_ascii() {
        let start = |c: u8| c.is_ascii_alphabetic() || c == b'_';
        let rest = |c: u8| start(c) || c.is_ascii_digit() || c == b'-' || c == b'.';
        return b.first().is_some_and(|&c| start(c)) && b[1..].iter().all(|&c| rest(c));
    }
    let start =
        |c: char| c.is_ascii_alphabetic() || c == '_' || (!c.is_ascii() && c.is_alphabetic());
    let rest = |c: char| {
        start(c)
            || c.is_ascii_digit()
            || c == '-'
            || c == '.'
            || (!c.is_ascii() && c.is_alphanumeric())
    };
    let mut chars = s.chars();
    chars.next().is_some_and(start) && chars.all(rest)
}

impl<'a> QName<'a> {
    pub fn new(namespace: impl Into<Cow<'a, str>>, local: impl Into<Cow<'a, str>>) -> Self {
        Self {
            namespace: namespace.into(),
            local: local.into(),
        }
    }

    /// The same name, owning its parts.
    pub fn into_owned(self) -> QName<'static> {
        QName {
            namespace: Cow::Owned(self.namespace.into_owned()),
            local: Cow::Owned(self.local.into_owned()),
        }
    }

    /// Splits the collapsed lexical form `prefix:local` or `local` and checks both parts are NCNames.
    /// The caller resolves the prefix.
    pub(crate) fn split_lexical(raw: &str) -> Result<(Option<&str>, &str), XsdError> {
        let s = collapse(raw);
        let (prefix, local) = match s.bytes().position(|b| b == b':') {
            Some(i) => (Some(&s[..i]), &s[i + 1..]),
            None => (None, s),
        };
        if prefix.is_some_and(|p| !is_ncname(p)) || !is_ncname(local) {
            return Err(XsdError::new("QName", raw));
        }
        Ok((prefix, local))
    }

    /// Appends a whole element `<name …>p:local</name>` whose text is this QName. `name` is written
    /// unprefixed and must resolve to `element_ns` through the default namespace of the context.
    pub(crate) fn write_element(&self, out: &mut Vec<u8>, name: &str, element_ns: &str) {
        out.push(b'<');
        if self.namespace.is_empty() {
            // An unprefixed QName would take the default namespace, so undeclare it; the element itself
            // then needs a prefix of its own.
            out.extend_from_slice(b"e:");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b" xmlns:e=\"");
            write_attr(out, element_ns);
            out.extend_from_slice(b"\" xmlns=\"\">");
            write_text(out, &self.local);
            out.extend_from_slice(b"</e:");
        } else {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b" xmlns:q=\"");
            write_attr(out, &self.namespace);
            out.extend_from_slice(b"\">q:");
            write_text(out, &self.local);
            out.extend_from_slice(b"</");
        }
        out.extend_from_slice(name.as_bytes());
        out.push(b'>');
    }
}

impl fmt::Display for QName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}{}", self.namespace, self.local)
    }
}
