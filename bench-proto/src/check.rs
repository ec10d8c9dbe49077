//! The cheap check every response passes before it counts as a success: a whole SOAP envelope whose body
//! holds the operation's response element in its namespace and, for array echoes, the number of items sent.
//! (The field-by-field comparison is the full parse, which load generators run on a sample.)
//!
//! Two paths, with one meaning. A response written as bench-server and CXF's canonical writer write it (a
//! fixed prefix up to the response element's start tag, a fixed suffix after its end tag) is recognised by
//! comparing those bytes and counting item start tags: a few hundred instructions for a 2 KB body. Any
//! other spelling (prefixes, whitespace, headers, comments) goes through the namespace-correct
//! [`BodyReader`], which walks the whole document.

use memchr::memmem;

use crate::soap::{envelope_end, envelope_start, BodyReader, SoapError};

/// What a response must look like: `{ns}element` as the Body's child, optionally with exactly `count`
/// `item` elements (as its children, or as children of its child `within`).
#[derive(Debug, Clone)]
pub struct Shape {
    ns: &'static str,
    element: &'static str,
    items: Option<Items>,
    /// The canonical bytes before the response element's content and after it.
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    /// The whole expected response as the canonical writer writes it, when the caller knows it: a body
    /// equal to it passes at the cost of one comparison (bench-server answers exactly these bytes).
    exact: Option<Vec<u8>>,
}

/// An array echo's items: `count` elements named `item` (under the wrapper, or under its child `within`).
#[derive(Debug, Clone)]
struct Items {
    within: Option<&'static str>,
    item: &'static str,
    count: usize,
    /// `<item>`, as the canonical writer spells it.
    start_tag: Vec<u8>,
}

/// Why a response does not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("not a SOAP envelope: {0}")]
    Envelope(String),
    #[error("the Body holds {found}, not {{{ns}}}{expected}")]
    WrongElement {
        ns: &'static str,
        expected: &'static str,
        found: String,
    },
    #[error("{found} {item} elements in the response, {expected} sent")]
    ItemCount {
        item: &'static str,
        expected: usize,
        found: usize,
    },
}

impl Shape {
    /// `{ns}element` as the Body's only child.
    pub fn new(ns: &'static str, element: &'static str) -> Shape {
        let mut prefix = Vec::new();
        envelope_start(&mut prefix);
        crate::soap::start_element_ns(&mut prefix, element, ns);
        let mut suffix = Vec::new();
        crate::soap::end_element(&mut suffix, element);
        envelope_end(&mut suffix);
        Shape {
            ns,
            element,
            items: None,
            prefix,
            suffix,
            exact: None,
        }
    }

    /// …and, if the body is exactly `canonical` (the expected response, canonically written), nothing
    /// else needs looking at.
    pub fn with_exact(mut self, canonical: Vec<u8>) -> Shape {
        self.exact = Some(canonical);
        self
    }

    /// …holding exactly `count` `item` elements, directly or under its child `within`.
    pub fn with_items(
        mut self,
        within: Option<&'static str>,
        item: &'static str,
        count: usize,
    ) -> Shape {
        self.items = Some(Items {
            within,
            item,
            count,
            start_tag: format!("<{item}>").into_bytes(),
        });
        self
    }

    /// Checks `body` (the whole response body).
    pub fn check(&self, body: &[u8]) -> Result<(), ShapeError> {
        if self.exact.as_deref() == Some(body) {
            return Ok(());
        }
        match self.canonical_content(body) {
            Some(content) => self.count_canonical(content),
            None => self.check_by_reading(body),
        }
    }

    /// The bytes between the canonical prefix and suffix (trailing whitespace allowed), if it is spelled so.
    fn canonical_content<'b>(&self, body: &'b [u8]) -> Option<&'b [u8]> {
        let end = body.len()
            - body
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        let body = &body[..end];
        if body.len() < self.prefix.len() + self.suffix.len()
            || !body.starts_with(&self.prefix)
            || !body.ends_with(&self.suffix)
        {
            return None;
        }
        Some(&body[self.prefix.len()..body.len() - self.suffix.len()])
    }

    fn count_canonical(&self, content: &[u8]) -> Result<(), ShapeError> {
        let Some(items) = &self.items else {
            return Ok(());
        };
        // Markup cannot occur in text or attribute values unescaped, so in the canonical spelling every
        // `<item>` is a start tag (a CDATA section or comment holding one is caught by the sampled full check).
        let found = memmem::find_iter(content, &items.start_tag).count();
        items.compare(found)
    }

    fn check_by_reading(&self, body: &[u8]) -> Result<(), ShapeError> {
        let mut r = BodyReader::open(body).map_err(|e| ShapeError::Envelope(e.to_string()))?;
        let envelope = |e: SoapError| ShapeError::Envelope(e.to_string());
        let Some(el) = r.next_child().map_err(envelope)? else {
            return Err(self.wrong("an empty Body".to_owned()));
        };
        if el.local_name() != self.element.as_bytes() || !r.is_in(&el, self.ns) {
            let found = format!(
                "{{{}}}{}",
                r.namespace_of(&el),
                String::from_utf8_lossy(el.local_name())
            );
            return Err(self.wrong(found));
        }
        match &self.items {
            None => r.skip().map_err(envelope)?,
            Some(items) => {
                let found = items.count_by_reading(&mut r, self.ns).map_err(envelope)?;
                items.compare(found)?;
            }
        }
        r.finish().map_err(envelope)
    }

    fn wrong(&self, found: String) -> ShapeError {
        ShapeError::WrongElement {
            ns: self.ns,
            expected: self.element,
            found,
        }
    }
}

impl Items {
    fn compare(&self, found: usize) -> Result<(), ShapeError> {
        if found == self.count {
            Ok(())
        } else {
            Err(ShapeError::ItemCount {
                item: self.item,
                expected: self.count,
                found,
            })
        }
    }

    /// Counts the `item` children (of the `within` child, if any) of the current element, consuming it.
    fn count_by_reading(&self, r: &mut BodyReader<'_>, ns: &str) -> Result<usize, SoapError> {
        let mut found = 0;
        while let Some(el) = r.next_child()? {
            let is = |name: &str| el.local_name() == name.as_bytes() && r.is_in(&el, ns);
            match self.within {
                Some(w) if is(w) => {
                    while let Some(inner) = r.next_child()? {
                        if inner.local_name() == self.item.as_bytes() && r.is_in(&inner, ns) {
                            found += 1;
                        }
                        r.skip()?;
                    }
                    continue;
                }
                None if is(self.item) => found += 1,
                _ => {}
            }
            r.skip()?;
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::customer;
    use crate::cxf::{self, Response};

    fn cxf_shape(count: usize) -> Shape {
        Shape::new(cxf::TYPES_NS, "echoComplexTypeDocResponse").with_items(
            Some("return"),
            "item",
            count,
        )
    }

    fn echo_complex(items: usize) -> Vec<u8> {
        let req = cxf::echo_complex_request(items, 7);
        let mut out = Vec::new();
        cxf::write_response(&req.into_echo_response(), &mut out);
        out
    }

    #[test]
    fn canonical_responses_pass_and_count_items() {
        for n in [0, 1, 5] {
            let body = echo_complex(n);
            assert!(cxf_shape(n).canonical_content(&body).is_some());
            assert_eq!(cxf_shape(n).check(&body), Ok(()), "{n} items");
            let mut ws = body.clone();
            ws.extend_from_slice(b"\r\n");
            assert_eq!(cxf_shape(n).check(&ws), Ok(()));
        }
        let e = cxf_shape(2).check(&echo_complex(1)).unwrap_err();
        assert_eq!(
            e,
            ShapeError::ItemCount {
                item: "item",
                expected: 2,
                found: 1
            }
        );
    }

    #[test]
    fn the_exact_expected_bytes_pass_and_anything_else_is_still_checked() {
        let body = echo_complex(2);
        let shape = cxf_shape(2).with_exact(body.clone());
        assert_eq!(shape.check(&body), Ok(()));
        // Another id: not the exact bytes, but the right shape.
        let req = cxf::echo_complex_request(2, 8);
        let mut other = Vec::new();
        cxf::write_response(&req.into_echo_response(), &mut other);
        assert_eq!(shape.check(&other), Ok(()));
        assert!(shape.check(&echo_complex(1)).is_err());
        assert!(shape.check(&body[..body.len() - 1]).is_err());
    }

    #[test]
    fn other_spellings_are_read_with_the_same_meaning() {
        let ns = cxf::TYPES_NS;
        let env = "http://schemas.xmlsoap.org/soap/envelope/";
        let body = format!(
            "<S:Envelope xmlns:S='{env}'><S:Header/><S:Body>\n  <p:echoComplexTypeDocResponse xmlns:p='{ns}'>\
             <p:return><p:item><p:x/></p:item><!-- c --><p:item/></p:return><p:idout>1</p:idout>\
             </p:echoComplexTypeDocResponse></S:Body></S:Envelope>"
        );
        assert!(cxf_shape(2).canonical_content(body.as_bytes()).is_none());
        assert_eq!(cxf_shape(2).check(body.as_bytes()), Ok(()));
        assert!(matches!(
            cxf_shape(3).check(body.as_bytes()),
            Err(ShapeError::ItemCount { found: 2, .. })
        ));
        let wrong_ns = body.replace(&format!("xmlns:p='{ns}'"), "xmlns:p='urn:other'");
        assert!(matches!(
            cxf_shape(2).check(wrong_ns.as_bytes()),
            Err(ShapeError::WrongElement { .. })
        ));
    }

    #[test]
    fn wrong_answers_fail() {
        let shape = cxf_shape(1);
        let mut string_echo = Vec::new();
        cxf::write_response(&Response::EchoString("x".into()), &mut string_echo);
        let good = echo_complex(1);
        let truncated = &good[..good.len() - 10];
        let cases: [(&str, &[u8]); 6] = [
            ("empty", b""),
            ("not xml", b"hello"),
            ("html", b"<html><body>ok</body></html>"),
            ("other operation", &string_echo),
            ("truncated", truncated),
            ("garbage after", &[&good[..], b"<x/>"].concat()),
        ];
        for (what, body) in cases {
            assert!(shape.check(body).is_err(), "{what} passed");
        }
        let get = Shape::new(customer::NS, "getResponse").with_items(None, "customer", 1);
        assert!(matches!(
            get.check(&string_echo),
            Err(ShapeError::WrongElement { .. })
        ));
    }

    #[test]
    fn customer_arrays_are_counted() {
        let cs = customer::generate_for_size(4096, 1);
        let mut body = Vec::new();
        customer::write_response(&customer::Response::Echo(cs.clone()), &mut body);
        let shape = Shape::new(customer::NS, "echoResponse").with_items(None, "customer", cs.len());
        assert_eq!(shape.check(&body), Ok(()));
        let fewer =
            Shape::new(customer::NS, "echoResponse").with_items(None, "customer", cs.len() + 1);
        assert!(fewer.check(&body).is_err());
    }
}
