//! Bounds on what one SOAP message may make the reader do, so that its cost stays linear in its size whatever
//! its shape: nesting, attributes and namespace declarations per element, namespaces in scope, name lengths,
//! items per array, elements in the (skipped) Header, comments, and the work of the attribute and namespace
//! scans in proportion to the message's size (`work.rs`). Elements in the Header and comments matter because
//! each token costs the tokenizer a few hundred instructions whatever its size: a flood of `<h/>` or `<!---->`
//! would otherwise cost many times more per byte than a real message; attributes and prefix lookups are the
//! work budget's. A message past a bound is refused with a fault naming the bound and its value.

use std::fmt;

/// The reader's bounds. `Limits::default()` serves every well-behaved client with room to spare; servers expose
/// the ones a user may need to raise as flags (named by [`Limit::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Elements open at once, the Envelope included (the services need 8).
    pub max_depth: usize,
    /// Attributes on one element, namespace declarations included.
    pub max_attributes: usize,
    /// Namespace declarations (`xmlns`, `xmlns:p`) on one element.
    pub max_namespace_declarations: usize,
    /// Namespace declarations in scope at once (declared on the element and its ancestors).
    pub max_namespaces_in_scope: usize,
    /// Bytes in one element or attribute name, prefix included.
    pub max_name_len: usize,
    /// Elements in one repeated sequence (CXF items, customers, tags).
    pub max_items: usize,
    /// Elements inside the SOAP Header, all blocks and their content together (the reader skips them).
    pub max_header_elements: usize,
    /// Comments and processing instructions anywhere in the message.
    pub max_comments: usize,
    /// Work units the attribute and namespace scans may spend per KiB of the message (and of 4 KiB more): an
    /// attribute costs 24, a namespace declaration 24 more, a binding examined by a prefix lookup 2 (see
    /// `work.rs`).
    pub max_work: usize,
}

impl Limits {
    pub const DEFAULT_MAX_DEPTH: usize = 64;
    pub const DEFAULT_MAX_ATTRIBUTES: usize = 64;
    pub const DEFAULT_MAX_NAMESPACE_DECLARATIONS: usize = 32;
    pub const DEFAULT_MAX_NAMESPACES_IN_SCOPE: usize = 64;
    pub const DEFAULT_MAX_NAME_LEN: usize = 256;
    /// Beyond what 8 MiB (the server's default body limit) can hold of customers or CXF items; it bounds the
    /// many tiny `tag` elements a body of that size could otherwise hold.
    pub const DEFAULT_MAX_ITEMS: usize = 100_000;
    /// A signed WS-Security header has about 40 elements.
    pub const DEFAULT_MAX_HEADER_ELEMENTS: usize = 128;
    pub const DEFAULT_MAX_COMMENTS: usize = 256;
    /// One unit a byte: an attribute per 24 bytes of message on average, which no SOAP message comes near
    /// (a CXF item has two in 1.75 KB; a WS-Security header about one in 40 bytes).
    pub const DEFAULT_MAX_WORK: usize = 1024;

    /// The value of `limit` in these bounds.
    pub fn get(&self, limit: Limit) -> usize {
        match limit {
            Limit::Depth => self.max_depth,
            Limit::Attributes => self.max_attributes,
            Limit::NamespaceDeclarations => self.max_namespace_declarations,
            Limit::NamespacesInScope => self.max_namespaces_in_scope,
            Limit::NameLength => self.max_name_len,
            Limit::Items => self.max_items,
            Limit::HeaderElements => self.max_header_elements,
            Limit::Comments => self.max_comments,
            Limit::Work => self.max_work,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_attributes: Self::DEFAULT_MAX_ATTRIBUTES,
            max_namespace_declarations: Self::DEFAULT_MAX_NAMESPACE_DECLARATIONS,
            max_namespaces_in_scope: Self::DEFAULT_MAX_NAMESPACES_IN_SCOPE,
            max_name_len: Self::DEFAULT_MAX_NAME_LEN,
            max_items: Self::DEFAULT_MAX_ITEMS,
            max_header_elements: Self::DEFAULT_MAX_HEADER_ELEMENTS,
            max_comments: Self::DEFAULT_MAX_COMMENTS,
            max_work: Self::DEFAULT_MAX_WORK,
        }
    }
}

/// One of the [`Limits`], as named in faults and in the server's flags (`--xml-max-depth` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    Depth,
    Attributes,
    NamespaceDeclarations,
    NamespacesInScope,
    NameLength,
    Items,
    HeaderElements,
    Comments,
    Work,
}

impl Limit {
    pub const ALL: [Self; 9] = [
        Self::Depth,
        Self::Attributes,
        Self::NamespaceDeclarations,
        Self::NamespacesInScope,
        Self::NameLength,
        Self::Items,
        Self::HeaderElements,
        Self::Comments,
        Self::Work,
    ];

    /// The limit's name: the server flag without its dashes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Depth => "xml-max-depth",
            Self::Attributes => "xml-max-attributes",
            Self::NamespaceDeclarations => "xml-max-namespace-declarations",
            Self::NamespacesInScope => "xml-max-namespaces-in-scope",
            Self::NameLength => "xml-max-name-len",
            Self::Items => "xml-max-items",
            Self::HeaderElements => "xml-max-header-elements",
            Self::Comments => "xml-max-comments",
            Self::Work => "xml-max-work",
        }
    }

    /// What was too much, for the fault text.
    fn what(self) -> &'static str {
        match self {
            Self::Depth => "elements are nested deeper",
            Self::Attributes => "the element has more attributes",
            Self::NamespaceDeclarations => "the element declares more namespaces",
            Self::NamespacesInScope => "more namespace declarations are in scope",
            Self::NameLength => "a name is longer (in bytes)",
            Self::Items => "the sequence has more items",
            Self::HeaderElements => "the Header has more elements",
            Self::Comments => "the message has more comments and processing instructions",
            Self::Work => {
                "reading the message takes more work (attributes, namespace declarations and prefix \
                 lookups, in units per KiB)"
            }
        }
    }
}

/// `Display` of an exceeded limit: "the element has more attributes than xml-max-attributes = 32".
#[derive(Debug)]
pub(super) struct Exceeded(pub(super) Limit, pub(super) usize);

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} than {} = {}", self.0.what(), self.0.name(), self.1)
    }
}

#[cfg(test)]
mod tests {
    //! Each limit: a message exactly at it is read, one past it gets a fault naming the limit, its value and
    //! where in the message it was passed.

    use super::*;
    use crate::{customer, cxf};

    fn reference() -> String {
        let mut out = Vec::new();
        cxf::write_request(&cxf::echo_complex_request(1, 1), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The fault for `doc` within `limits`, or `None` if it parses.
    fn fault(doc: &str, limits: Limits) -> Option<String> {
        cxf::parse_request_with(doc.as_bytes(), &limits)
            .err()
            .map(|e| e.fault().string)
    }

    /// `doc` parses with `limit` at `at`, and one below gives `expected`.
    fn check(doc: &str, set: impl Fn(&mut Limits, usize), at: usize, expected: &str) {
        let mut limits = Limits::default();
        set(&mut limits, at);
        assert_eq!(fault(doc, limits), None, "at the limit ({at})");
        set(&mut limits, at - 1);
        assert_eq!(fault(doc, limits).as_deref(), Some(expected));
    }

    #[test]
    fn depth() {
        // Envelope, Body, echoComplexTypeDoc, in, item, varStruct, varFloat.
        check(
            &reference(),
            |l, v| l.max_depth = v,
            7,
            "echoComplexTypeDoc/in/item[0]/varStruct/varFloat: elements are nested deeper than \
             xml-max-depth = 6",
        );
    }

    #[test]
    fn attributes() {
        let doc = reference().replace("<varStruct ", "<varStruct a=\"1\" b=\"2\" ");
        check(
            &doc,
            |l, v| l.max_attributes = v,
            3,
            "echoComplexTypeDoc/in/item[0]/varStruct: the element has more attributes than \
             xml-max-attributes = 2",
        );
    }

    #[test]
    fn namespace_declarations_per_element() {
        let doc = reference().replace(
            "<varStruct ",
            "<varStruct xmlns:a=\"urn:a\" xmlns:b=\"urn:b\" ",
        );
        check(
            &doc,
            |l, v| l.max_namespace_declarations = v,
            2,
            "echoComplexTypeDoc/in/item[0]/varStruct: the element declares more namespaces than \
             xml-max-namespace-declarations = 1",
        );
    }

    #[test]
    fn namespaces_in_scope() {
        // soap (Envelope), the default namespace (echoComplexTypeDoc), q (varQName).
        check(
            &reference(),
            |l, v| l.max_namespaces_in_scope = v,
            3,
            "echoComplexTypeDoc/in/item[0]/varQName: more namespace declarations are in scope than \
             xml-max-namespaces-in-scope = 2",
        );
    }

    #[test]
    fn name_length() {
        // echoComplexTypeDoc is the longest name.
        check(
            &reference(),
            |l, v| l.max_name_len = v,
            18,
            "Body: a name is longer (in bytes) than xml-max-name-len = 17",
        );
        let doc = reference().replace("<varStruct ", "<varStruct a2345678901234567890=\"\" ");
        check(
            &doc,
            |l, v| l.max_name_len = v,
            20,
            "echoComplexTypeDoc/in/item[0]/varStruct: a name is longer (in bytes) than \
             xml-max-name-len = 19",
        );
    }

    #[test]
    fn items() {
        let mut doc = Vec::new();
        cxf::write_request(&cxf::echo_complex_request(3, 1), &mut doc);
        check(
            std::str::from_utf8(&doc).unwrap(),
            |l, v| l.max_items = v,
            3,
            "echoComplexTypeDoc/in/item[2]: the sequence has more items than xml-max-items = 2",
        );
        // Every sequence: the tags of a customer too.
        let mut c = customer::generate(1, 1, 1);
        c[0].tags = vec!["t".into(); 3];
        let mut doc = Vec::new();
        customer::write_request(&customer::Request::Echo(c), &mut doc);
        let limits = Limits {
            max_items: 2,
            ..Limits::default()
        };
        assert_eq!(
            customer::parse_request_with(&doc, &limits)
                .unwrap_err()
                .to_string(),
            "echo/customer[0]/tags/tag[2]: the sequence has more items than xml-max-items = 2"
        );
    }

    #[test]
    fn header_elements() {
        let doc = reference().replace(
            "<soap:Body>",
            "<soap:Header><h:a xmlns:h=\"urn:h\"><h:b/></h:a><h:c/></soap:Header><soap:Body>",
        );
        check(
            &doc,
            |l, v| l.max_header_elements = v,
            3,
            "Envelope/Header: the Header has more elements than xml-max-header-elements = 2",
        );
    }

    #[test]
    fn comments() {
        let doc = reference()
            .replacen("<item>", "<!-- a --><?pi b?><item>", 1)
            .replacen("</varString>", "<!-- c --></varString>", 1);
        check(
            &doc,
            |l, v| l.max_comments = v,
            3,
            "echoComplexTypeDoc/in/item[0]/varString: the message has more comments and processing \
             instructions than xml-max-comments = 2",
        );
    }

    #[test]
    fn work() {
        // The reference request's work (the envelope's and the wrapper's declarations, the item's attribute
        // and its QName's declaration and lookup: 174 units) within the budget of 4 KiB more than it; the
        // fast paths charge it, checked as the message is finished (a fault for the whole message).
        let doc = reference();
        let least = (1..100)
            .find(|&v| {
                fault(
                    &doc,
                    Limits {
                        max_work: v,
                        ..Limits::default()
                    },
                )
                .is_none()
            })
            .unwrap();
        check(
            &doc,
            |l, v| l.max_work = v,
            least,
            &format!(
                "reading the message takes more work (attributes, namespace declarations and prefix \
                 lookups, in units per KiB) than xml-max-work = {}",
                least - 1
            ),
        );
        assert!((30..50).contains(&least), "{least}");
    }

    #[test]
    fn every_limit_has_a_distinct_name_and_the_defaults_hold_the_services() {
        let names: std::collections::HashSet<_> = Limit::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(names.len(), Limit::ALL.len());
        let d = Limits::default();
        for l in Limit::ALL {
            assert!(d.get(l) > 0, "{l:?}");
        }
        assert_eq!(fault(&reference(), d), None);
    }
}
