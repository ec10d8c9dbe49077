//! The namespace declarations in scope: a stack of bindings borrowed from the input, pushed by start tags and
//! popped by their end tags. Lookups scan from the innermost binding; the reader bounds how many there are, so
//! a lookup costs at most that many short comparisons.

use std::borrow::Cow;
use std::cell::Cell;

use super::recycle;

/// The namespace the `xml` prefix is bound to by definition.
pub(super) const XML_NS: &[u8] = b"http://www.w3.org/XML/1998/namespace";
/// The namespace of the `xmlns` attributes themselves, which nothing may be bound to.
pub(super) const XMLNS_NS: &[u8] = b"http://www.w3.org/2000/xmlns/";

/// What a prefix (or the absence of one) stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resolved<'s> {
    /// A namespace URI.
    Bound(&'s [u8]),
    /// No namespace: an unprefixed name without a default namespace in scope (or after `xmlns=""`).
    NoNamespace,
    /// A prefix nothing declares.
    Undeclared,
}

#[derive(Debug)]
struct Binding<'a> {
    /// Empty for the default namespace.
    prefix: &'a [u8],
    uri: Cow<'a, [u8]>,
    /// Depth of the element that declared it.
    depth: usize,
}

/// The bindings in scope, innermost last.
#[derive(Debug)]
pub(super) struct Scope<'a> {
    bindings: Vec<Binding<'a>>,
    /// Changes whenever a binding comes or goes, so that a lookup remembered with it is known to hold.
    generation: u64,
}

thread_local! {
    static BINDINGS: Cell<Vec<Binding<'static>>> = const { Cell::new(Vec::new()) };
}

impl Default for Scope<'_> {
    fn default() -> Self {
        // A SOAP message declares a handful: one allocation serves them, kept for the next message.
        Self {
            bindings: recycle::take(&BINDINGS, 8),
            generation: 0,
        }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        recycle::keep(&BINDINGS, std::mem::take(&mut self.bindings));
    }
}

impl<'a> Scope<'a> {
    pub(super) fn len(&self) -> usize {
        self.bindings.len()
    }

    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Adds a declaration made by the element at `depth`: `prefix` is `None` for `xmlns="…"`. Refuses what
    /// Namespaces in XML 1.0 forbids.
    pub(super) fn declare(
        &mut self,
        prefix: Option<&'a [u8]>,
        uri: Cow<'a, [u8]>,
        depth: usize,
    ) -> Result<(), &'static str> {
        let reserved = uri.as_ref() == XML_NS || uri.as_ref() == XMLNS_NS;
        match prefix {
            Some(b"xmlns") => return Err("the prefix 'xmlns' cannot be declared"),
            Some(b"xml") if uri.as_ref() == XML_NS => return Ok(()),
            Some(b"xml") => return Err("the prefix 'xml' cannot be bound to another namespace"),
            Some(_) if reserved => {
                return Err(
                    "only the prefix 'xml' may be bound to the XML namespace, none to xmlns's",
                )
            }
            Some(_) if uri.is_empty() => {
                return Err("a namespace prefix cannot be undeclared (xmlns:p=\"\")")
            }
            None if reserved => return Err("the XML and xmlns namespaces cannot be the default"),
            _ => {}
        }
        self.generation += 1;
        self.bindings.push(Binding {
            prefix: prefix.unwrap_or_default(),
            uri,
            depth,
        });
        Ok(())
    }

    /// Drops the declarations of elements deeper than `depth` (their end tags have been read).
    pub(super) fn leave(&mut self, depth: usize) {
        while self.bindings.last().is_some_and(|b| b.depth > depth) {
            self.bindings.pop();
            self.generation += 1;
        }
    }

    /// The namespace of a name with this prefix (`None`: unprefixed, so the default namespace).
    pub(super) fn resolve(&self, prefix: Option<&[u8]>) -> Resolved<'_> {
        let key = match prefix {
            Some(b"xml") => return Resolved::Bound(XML_NS),
            Some(b"") => return Resolved::Undeclared,
            Some(p) => p,
            None => b"",
        };
        match self.bindings.iter().rev().find(|b| b.prefix == key) {
            Some(b) if b.uri.is_empty() => Resolved::NoNamespace,
            Some(b) => Resolved::Bound(&b.uri),
            None if prefix.is_none() => Resolved::NoNamespace,
            None => Resolved::Undeclared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_declarations_shadow_and_leave_with_their_element() {
        let mut s = Scope::default();
        s.declare(None, Cow::Borrowed(b"urn:d"), 1).unwrap();
        s.declare(Some(b"p"), Cow::Borrowed(b"urn:p1"), 1).unwrap();
        s.declare(Some(b"p"), Cow::Borrowed(b"urn:p2"), 2).unwrap();
        s.declare(None, Cow::Borrowed(b""), 2).unwrap();
        assert_eq!(s.resolve(Some(b"p")), Resolved::Bound(b"urn:p2"));
        assert_eq!(s.resolve(None), Resolved::NoNamespace);
        assert_eq!(s.resolve(Some(b"q")), Resolved::Undeclared);
        assert_eq!(s.resolve(Some(b"xml")), Resolved::Bound(XML_NS));
        s.leave(1);
        assert_eq!(s.len(), 2);
        assert_eq!(s.resolve(Some(b"p")), Resolved::Bound(b"urn:p1"));
        assert_eq!(s.resolve(None), Resolved::Bound(b"urn:d"));
        s.leave(0);
        assert_eq!(s.resolve(None), Resolved::NoNamespace);
    }

    #[test]
    fn forbidden_declarations() {
        let mut s = Scope::default();
        let ns = |u: &'static [u8]| Cow::Borrowed(u);
        assert!(s.declare(Some(b"xmlns"), ns(b"urn:x"), 1).is_err());
        assert!(s.declare(Some(b"xml"), ns(b"urn:x"), 1).is_err());
        assert!(s.declare(Some(b"xml"), ns(XML_NS), 1).is_ok());
        assert!(s.declare(Some(b"x"), ns(XML_NS), 1).is_err());
        assert!(s.declare(Some(b"x"), ns(XMLNS_NS), 1).is_err());
        assert!(s.declare(Some(b"x"), ns(b""), 1).is_err());
        assert!(s.declare(None, ns(XMLNS_NS), 1).is_err());
        assert_eq!(s.len(), 0);
    }
}
