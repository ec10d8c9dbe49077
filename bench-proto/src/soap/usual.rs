//! Fast paths for the tags nearly every client writes byte for byte alike: the envelope's opening and end, a
//! wrapper declaring the default namespace, an element with one attribute, and a QName leaf declaring its own
//! prefix. Each matches those bytes exactly and then does what the general path would (the limits, the
//! declaration, the checks, the work it charges to the budget) or reads nothing and leaves the message to the
//! general path, so a message is accepted or refused the same either way (`tests.rs` compares the two on every
//! form and limit).

use std::borrow::Cow;

use bumpalo::Bump;

use super::attrs::qname_colon;
use super::find;
use super::ns::{XMLNS_NS, XML_NS};
use super::reader::is_plain;
use super::scan::same;
use super::unescape::unescape_in;
use super::work;
use super::{BodyReader, Element};
use crate::xsd::{self, QName};

/// The XML declaration most clients send first (optional here, as in XML).
const DECL: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
/// The envelope's opening as our writer, CXF and most stacks write it.
pub(super) const ENVELOPE: &[u8] =
    b"<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\"><soap:Body>";
/// Where, in [`ENVELOPE`], the element names and the namespace are.
const ENVELOPE_NAME: std::ops::Range<usize> = 1..14;
const ENVELOPE_PREFIX: std::ops::Range<usize> = 1..5;
const ENVELOPE_NS: std::ops::Range<usize> = 27..68;
const BODY_NAME: std::ops::Range<usize> = 71..80;

impl<'a> BodyReader<'a> {
    /// The usual opening (the declaration, optional, then `<soap:Envelope xmlns:soap="…"><soap:Body>`) at the
    /// start: read, the Envelope's declaration in scope, the reader inside the Body. False, nothing read, for
    /// anything else.
    pub(super) fn usual_envelope(&mut self) -> bool {
        let Some(rest) = self.scan.rest() else {
            return false;
        };
        let skip = if rest.starts_with(DECL) {
            DECL.len()
        } else {
            0
        };
        let open = &rest[skip..];
        if !open.starts_with(ENVELOPE) || !self.fits(2, ENVELOPE_NAME.len(), 1, 1) {
            return false;
        }
        let (prefix, uri) = (&open[ENVELOPE_PREFIX], &open[ENVELOPE_NS]);
        if self
            .ns
            .declare(Some(prefix), Cow::Borrowed(uri), 1)
            .is_err()
        {
            return false;
        }
        self.open.push(&open[ENVELOPE_NAME]);
        self.open.push(&open[BODY_NAME]);
        self.header_left = self.header_left.saturating_sub(2);
        // The declaration, and the general path's lookups of the prefix for the Envelope and the Body: the
        // one prefixed binding, found at the first probe.
        self.work
            .charge(work::ATTRIBUTE + work::DECLARATION + 2 * work::PROBE);
        self.scan.seek(self.position() + skip + ENVELOPE.len());
        true
    }

    /// The usual end, `</soap:Body></soap:Envelope>` (as the two were opened) right here and nothing after
    /// it: true, read. False, nothing read, for anything else.
    pub(super) fn usual_end(&mut self) -> bool {
        // No settling: the declarations of the element that just ended need not leave a scope the end does
        // not look at (the general path settles if it comes to it).
        let [envelope, body] = self.open[..] else {
            return false;
        };
        let Some(after_body) = self.scan.close_here(body) else {
            return false;
        };
        let rest = &self.input()[after_body..];
        let n = envelope.len();
        let usual = rest.len() == n + 3
            && rest.starts_with(b"</")
            && rest[n + 2] == b'>'
            && same(&rest[2..n + 2], envelope);
        if usual {
            self.open.clear();
            self.scan.seek(after_body + n + 3);
        }
        usual
    }

    /// The usual wrapper, `<name xmlns="ns">` right here (the name unprefixed): entered, its default
    /// namespace in scope. `None`, nothing read, for anything else.
    pub(super) fn usual_wrapper(&mut self, ns: &str) -> Option<Element<'a>> {
        const XMLNS: &[u8] = b" xmlns=\"";
        self.settle();
        let rest = self.scan.rest()?;
        let tag = rest.strip_prefix(b"<")?;
        let name_len = find::byte(b' ', &tag[..tag.len().min(self.limits.max_name_len + 1)])?;
        let (name, attrs) = tag.split_at(name_len);
        let uri = attrs.strip_prefix(XMLNS)?.get(..ns.len())?;
        let attrs_len = XMLNS.len() + ns.len() + 1;
        let reserved = uri == XML_NS || uri == XMLNS_NS;
        if uri != ns.as_bytes()
            || attrs.get(attrs_len - 1..=attrs_len) != Some(b"\">")
            || reserved
            || qname_colon(name) != Some(None)
            || !self.fits(1, name_len.max(b"xmlns".len()), 1, 1)
        {
            return None;
        }
        let pos = self.position() + 1;
        self.ns
            .declare(None, Cow::Borrowed(uri), self.open.len() + 1)
            .ok()?;
        self.open.push(name);
        self.header_left -= 1;
        self.work.charge(work::ATTRIBUTE + work::DECLARATION);
        self.scan.seek(pos + name_len + attrs_len + 1);
        Some(Element {
            name,
            local: 0,
            attrs: &attrs[..attrs_len],
            attrs_pos: pos + name_len,
            prefixed_attrs: false,
        })
    }

    /// The usual `<name attr="value">` right here, unprefixed, in the default namespace `ns`: entered, with
    /// the value (references expanded into `arena`). `None`, nothing read, for anything else (a value with
    /// whitespace to normalise included).
    pub(super) fn usual_child_with_attribute(
        &mut self,
        ns: &str,
        name: &str,
        attr: &str,
        arena: &'a Bump,
    ) -> Option<(Element<'a>, &'a str)> {
        self.settle();
        let rest = self.scan.rest()?;
        let head = name.len() + attr.len() + 4;
        let h = rest.get(..head)?;
        let matches = h[0] == b'<'
            && &h[1..=name.len()] == name.as_bytes()
            && h[name.len() + 1] == b' '
            && &h[name.len() + 2..head - 2] == attr.as_bytes()
            && &h[head - 2..] == b"=\"";
        if !matches || !self.fits(1, name.len().max(attr.len()), 1, 0) || !self.default_is(ns) {
            return None;
        }
        let value_len = find::byte(b'"', &rest[head..])?;
        if rest.get(head + value_len + 1) != Some(&b'>') {
            return None;
        }
        let raw = &rest[head..head + value_len];
        let text = self.checked_text(raw)?;
        // `<` may not appear in a value; tabs and line ends would be normalised (the general path does that).
        let value = if is_plain(raw) && !raw.contains(&b'<') {
            text
        } else if find::any_of3(b'<', b'\t', b'\n', raw).is_some()
            || find::byte(b'\r', raw).is_some()
        {
            return None;
        } else {
            let value = unescape_in(text, arena).ok()?;
            xsd::check_chars(value).ok()?;
            value
        };
        let pos = self.position() + 1;
        let name = &rest[1..=name.len()];
        self.open.push(name);
        self.header_left -= 1;
        self.work.charge(work::ATTRIBUTE);
        self.scan.seek(pos + head + value_len + 1);
        let el = Element {
            name,
            local: 0,
            attrs: &rest[name.len() + 1..head + value_len + 1],
            attrs_pos: pos + name.len(),
            prefixed_attrs: false,
        };
        Some((el, value))
    }

    /// The usual QName leaf, `<name xmlns:p="uri">p:local</name>` right here, unprefixed, in the default
    /// namespace `ns`: read, its parts borrowed from the input. `None`, nothing read, for anything else.
    pub(super) fn usual_qname_leaf(&mut self, ns: &str, name: &str) -> Option<QName<'a>> {
        const XMLNS: &[u8] = b" xmlns:";
        self.settle();
        let rest = self.scan.rest()?;
        let head = 1 + name.len() + XMLNS.len();
        let h = rest.get(..head)?;
        if h[0] != b'<' || &h[1..=name.len()] != name.as_bytes() || &h[name.len() + 1..] != XMLNS {
            return None;
        }
        let after = &rest[head..];
        let prefix_len = after
            .iter()
            .take(self.limits.max_name_len + 1)
            .position(|&b| b == b'=')?;
        let prefix = &after[..prefix_len];
        let after = after[prefix_len..].strip_prefix(b"=\"")?;
        let uri_len = find::byte(b'"', after)?;
        let uri = &after[..uri_len];
        let after = after[uri_len..].strip_prefix(b"\">")?;
        let text_len = find::byte(b'<', after)?;
        let end = &after[text_len..];
        let closed = end.starts_with(b"</")
            && end.get(2..2 + name.len()) == Some(name.as_bytes())
            && end.get(2 + name.len()) == Some(&b'>');
        let prefix_ok = qname_colon(prefix) == Some(None) && !matches!(prefix, b"xml" | b"xmlns");
        let uri_ok = !uri.is_empty()
            && is_plain(uri)
            && !uri.contains(&b'<')
            && uri != XML_NS
            && uri != XMLNS_NS;
        let text = &after[..text_len];
        let attr_name_len = XMLNS.len() - 1 + prefix_len;
        let usual = closed && prefix_ok && uri_ok && is_plain(text);
        if !usual || !self.fits(1, name.len().max(attr_name_len), 1, 1) || !self.default_is(ns) {
            return None;
        }
        // `p:local` exactly, the prefix the one declared (whitespace to collapse goes the general way); for
        // ASCII, `qname_colon`'s names are xsd:QName's NCNames.
        let local = text.strip_prefix(prefix)?.strip_prefix(b":")?;
        if qname_colon(local) != Some(None) {
            return None;
        }
        let local = self.checked_text(local)?;
        let namespace = self.checked_text(uri)?;
        self.header_left -= 1;
        // The declaration the general path makes (and the room its table makes for it), and its lookup of
        // the value's prefix, the innermost binding.
        self.ns.make_room();
        let probes = self.ns.probes_once_declared(prefix) as u64;
        self.work
            .charge(work::ATTRIBUTE + work::DECLARATION + probes * work::PROBE);
        let read = rest.len() - end.len() + name.len() + 3;
        self.scan.seek(self.position() + read);
        Some(QName::new(namespace, local))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_ranges_name_its_parts() {
        assert_eq!(&ENVELOPE[ENVELOPE_NAME], b"soap:Envelope");
        assert_eq!(&ENVELOPE[ENVELOPE_PREFIX], b"soap");
        assert_eq!(
            &ENVELOPE[ENVELOPE_NS],
            super::super::SOAP11_ENV_NS.as_bytes()
        );
        assert_eq!(&ENVELOPE[BODY_NAME], b"soap:Body");
    }
}
