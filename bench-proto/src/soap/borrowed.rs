//! Typed-field helpers on [`BodyReader`] whose values borrow: text that needs no unescaping is a slice of the
//! input, and what must be decoded or expanded is written into the caller's arena, so that reading a message
//! allocates nothing on the heap once the arena has grown to fit.

use bumpalo::Bump;

use super::attrs::normalize;
use super::reader::is_plain;
use super::unescape::unescape_in;
use super::{BodyReader, Element, SoapError};
use crate::xsd::{self, QName};

impl<'a> BodyReader<'a> {
    /// The next child `{ns}name` as an xsd:string: borrowed from the input when it has no references, else
    /// expanded into `arena`.
    pub(crate) fn str_field_in(
        &mut self,
        ns: &'static str,
        name: &'static str,
        arena: &'a Bump,
    ) -> Result<&'a str, SoapError> {
        if let Some((raw, next)) = self.leaf(ns, name) {
            if let Some(value) = self.leaf_string_in(raw, arena) {
                self.take_leaf(next);
                return Ok(value);
            }
        }
        self.within(ns, name, |r| r.text_in(arena))
    }

    /// A leaf's text as written, `raw`, as an xsd:string (as `text_leaf` reads it): printable ASCII without
    /// references is its own value; other text is expanded into `arena` and checked as the general path
    /// would. `None` for what the general path must read (or refuse).
    #[inline]
    pub(super) fn leaf_string_in(&self, raw: &'a [u8], arena: &'a Bump) -> Option<&'a str> {
        let text = self.text_of(raw).ok()?;
        if is_plain(raw) {
            return Some(text);
        }
        let value = unescape_in(text, arena).ok()?;
        xsd::check_chars(value).ok()?;
        Some(value)
    }

    /// The next child `{ns}name` as an xsd:QName, its parts borrowed (see [`qname_in`](Self::qname_in)).
    pub(crate) fn qname_field_in(
        &mut self,
        ns: &'static str,
        name: &'static str,
        arena: &'a Bump,
    ) -> Result<QName<'a>, SoapError> {
        if let Some(qname) = self.usual_qname_leaf(ns, name) {
            return Ok(qname);
        }
        self.within(ns, name, |r| r.qname_in(arena))
    }

    /// The next child, `{ns}name`, and the value of its attribute `attr` (in no namespace) if present, as
    /// [`attribute_in`](Self::attribute_in) gives it. Errors have an empty path: callers add `name`.
    pub(crate) fn child_with_attribute_in(
        &mut self,
        ns: &'static str,
        name: &'static str,
        attr: &str,
        arena: &'a Bump,
    ) -> Result<(Element<'a>, Option<&'a str>), SoapError> {
        if let Some((el, value)) = self.usual_child_with_attribute(ns, name, attr, arena) {
            return Ok((el, Some(value)));
        }
        let el = self.child(ns, name)?;
        let value = self.attribute_in(&el, attr, arena)?;
        Ok((el, value))
    }

    /// The value of the attribute `name` (in no namespace) of `el`, if present: borrowed from the input when
    /// it needs no normalising, else normalised into `arena`.
    pub fn attribute_in(
        &self,
        el: &Element<'a>,
        name: &str,
        arena: &'a Bump,
    ) -> Result<Option<&'a str>, SoapError> {
        let Some(attr) = el.attributes().find(|a| a.name == name.as_bytes()) else {
            return Ok(None);
        };
        let at = |e: String| self.xml_error_at_attr(el, attr.offset, &e);
        let value: &'a str = match self.checked_text(attr.value) {
            Some(text) if !text.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) => {
                unescape_in(text, arena).map_err(|e| at(e.to_string()))?
            }
            Some(text) => arena.alloc_str(&normalize(text).map_err(at)?),
            None => arena.alloc_str(&attr.normalized_value().map_err(at)?),
        };
        if !is_plain(attr.value) {
            xsd::check_chars(value).map_err(|c| SoapError::InvalidContent {
                field: format!("@{name}"),
                reason: format!("character U+{:04X} is not allowed in XML", u32::from(c)),
            })?;
        }
        Ok(Some(value))
    }

    /// [`repeated`](Self::repeated) into `arena`: the items as a slice of it.
    pub(crate) fn repeated_in<T>(
        &mut self,
        ns: &'static str,
        name: &'static str,
        arena: &'a Bump,
        read: impl FnMut(&mut Self) -> Result<T, SoapError>,
    ) -> Result<&'a [T], SoapError> {
        let mut items = bumpalo::collections::Vec::new_in(arena);
        self.each_child(ns, name, read, &mut items)?;
        Ok(items.into_bump_slice())
    }
}
