//! Typed-field helpers on [`BodyReader`] shared by the services: read the next child `{ns}name` and parse
//! its content, with errors carrying the element's path.

use super::{BodyReader, SoapError};
use crate::xsd::XsdError;

impl<'a> BodyReader<'a> {
    /// Reads the Body's wrapper element and looks up which operation (or response) it is.
    pub fn operation<Op>(
        &mut self,
        ns: &'static str,
        lookup: impl Fn(&[u8]) -> Option<Op>,
    ) -> Result<Op, SoapError> {
        let el = match self.usual_wrapper(ns) {
            Some(el) => el,
            None => self
                .next_child()
                .map_err(|e| e.at("Body"))?
                .ok_or(SoapError::EmptyBody)?,
        };
        let local = || super::reader::shorten(el.local_name());
        match lookup(el.local_name()) {
            Some(op) if self.is_in(&el, ns) => Ok(op),
            Some(_) => Err(SoapError::WrongNamespace {
                path: local(),
                expected: ns,
                found: self.namespace_of(&el),
            }),
            None => Err(SoapError::UnknownOperation {
                ns: self.namespace_of(&el),
                local: local(),
            }),
        }
    }

    /// Runs `read` on the next child `{ns}name`; errors get `name` prepended to their path.
    pub fn within<T>(
        &mut self,
        ns: &'static str,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<T, SoapError>,
    ) -> Result<T, SoapError> {
        let inner = || {
            self.child(ns, name)?;
            read(self)
        };
        inner().map_err(|e| e.at(name))
    }

    /// The next child `{ns}name`, its text parsed by `parse`. `parse` must refuse text with `&`, `<` or
    /// control characters other than whitespace (true of every XSD type but the string-like ones, which
    /// [`string_field`](Self::string_field) reads): text it accepts as written is then its own value.
    pub fn field<T>(
        &mut self,
        ns: &'static str,
        name: &'static str,
        parse: impl Fn(&str) -> Result<T, XsdError>,
    ) -> Result<T, SoapError> {
        // The lexical spaces of the types read here are ASCII without `&`, `<` or control characters other
        // than whitespace: text a parser accepts as written is its own value, so it needs no checks first;
        // only what it refuses goes the general way (references expanded, then parsed again).
        if let Some((raw, next)) = self.leaf(ns, name) {
            if let Some(value) = self.text_of(raw).ok().and_then(|t| parse(t).ok()) {
                self.take_leaf(next);
                return Ok(value);
            }
        }
        self.within(ns, name, |r| {
            let text = r.text()?;
            parse(&text).map_err(|reason| SoapError::InvalidField {
                field: String::new(),
                reason,
            })
        })
    }

    /// The next child `{ns}name`, its text parsed as bytes by `parse` (for types whose lexical space is
    /// ASCII, such as the binary ones: their text needs no UTF-8 check first). `parse` must refuse what
    /// [`field`](Self::field)'s must.
    pub fn bytes_field<T>(
        &mut self,
        ns: &'static str,
        name: &'static str,
        parse: impl Fn(&[u8]) -> Result<T, XsdError>,
    ) -> Result<T, SoapError> {
        // As for `field`: what the parser accepts as written is its own value.
        if let Some((raw, next)) = self.leaf(ns, name) {
            if let Ok(value) = parse(raw) {
                self.take_leaf(next);
                return Ok(value);
            }
        }
        self.within(ns, name, |r| {
            let text = r.text_bytes()?;
            parse(&text).map_err(|reason| SoapError::InvalidField {
                field: String::new(),
                reason,
            })
        })
    }

    /// The next child `{ns}name` as an xsd:string.
    pub fn string_field(
        &mut self,
        ns: &'static str,
        name: &'static str,
    ) -> Result<String, SoapError> {
        if let Some(text) = self.text_leaf(ns, name) {
            return Ok(text.into_owned());
        }
        self.within(ns, name, |r| Ok(r.text()?.into_owned()))
    }

    /// Reads every remaining child, each of which must be `{ns}name`, with `read` (which must consume
    /// the element's end); at most [`Limits::max_items`](super::Limits) of them. Errors get `name[i]`
    /// prepended.
    pub fn repeated<T>(
        &mut self,
        ns: &'static str,
        name: &'static str,
        read: impl FnMut(&mut Self) -> Result<T, SoapError>,
    ) -> Result<Vec<T>, SoapError> {
        let mut items = Vec::new();
        self.each_child(ns, name, read, &mut items)?;
        Ok(items)
    }

    /// [`repeated`](Self::repeated), appending to `items` (a vector of any allocator): [`each`](Self::each)
    /// keeping what `read` returns.
    pub(super) fn each_child<T>(
        &mut self,
        ns: &'static str,
        name: &'static str,
        mut read: impl FnMut(&mut Self) -> Result<T, SoapError>,
        items: &mut impl Items<T>,
    ) -> Result<(), SoapError> {
        self.each(ns, name, |r, _| {
            items.add(read(r)?);
            Ok(())
        })
        .map(|_| ())
    }
}

/// A growable sequence [`BodyReader::each_child`] appends to.
pub(super) trait Items<T> {
    fn add(&mut self, item: T);
}

impl<T> Items<T> for Vec<T> {
    fn add(&mut self, item: T) {
        self.push(item);
    }
}

impl<T> Items<T> for bumpalo::collections::Vec<'_, T> {
    fn add(&mut self, item: T) {
        self.push(item);
    }
}
