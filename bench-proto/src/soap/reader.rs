//! A bounded pull reader over a SOAP message (opened by `envelope.rs`) that lets a service walk the Body
//! element by element. `scan.rs` tokenizes (quick-xml's `Reader` reads the rare constructs); start tags,
//! attributes and namespaces are handled here, on slices of the input, within [`Limits`], so that the cost of
//! any message stays linear in its size. Any prefix (or the default namespace) works.

use std::borrow::Cow;
use std::cell::Cell;

use bumpalo::Bump;

use super::attrs::{normalize, qname_colon, Attr, Attrs};
use super::limits::{Limit, Limits};
use super::ns::{Resolved, Scope};
use super::recycle;
use super::scan::{same, ScanError, Scanner, Token};
use super::work::{self, Work};
use super::SoapError;
use crate::xsd::{self, XsdError};

/// A start tag just read. Its namespace declarations stay in scope until the reader moves past the element's
/// end, so resolve its namespace (with [`BodyReader::is_in`]) before reading on.
#[derive(Debug, Clone, Copy)]
pub struct Element<'a> {
    /// The qualified name as written.
    pub(super) name: &'a [u8],
    /// Where the local name starts in `name` (after the prefix and its colon; 0 if unprefixed).
    pub(super) local: usize,
    /// What follows the name inside the tag: the attributes (already checked).
    pub(super) attrs: &'a [u8],
    /// Offset of the attribute bytes in the input, for error positions.
    pub(super) attrs_pos: usize,
    /// Whether a prefixed attribute (other than a namespace declaration) is among them.
    pub(super) prefixed_attrs: bool,
}

impl<'a> Element<'a> {
    /// The local name (without prefix).
    pub(crate) fn local_name(&self) -> &'a [u8] {
        &self.name[self.local..]
    }

    fn prefix(&self) -> Option<&'a [u8]> {
        (self.local > 0).then(|| &self.name[..self.local - 1])
    }

    pub(super) fn describe(&self) -> String {
        shorten(self.name)
    }

    /// The element's attributes (their syntax was checked when the tag was read).
    pub(super) fn attributes(&self) -> impl Iterator<Item = Attr<'a>> {
        Attrs::new(self.attrs).map_while(Result::ok)
    }

    /// Whether it has a prefixed attribute other than a namespace declaration.
    pub(super) fn has_prefixed_attributes(&self) -> bool {
        self.prefixed_attrs
    }

    /// The value (as written) of the attribute whose name is `name`, a slice of this tag's attributes (as
    /// the reader noted them), whose syntax was checked: `="…"` or `='…'` after it, perhaps with spaces.
    pub(super) fn value_after(&self, name: &[u8]) -> Option<&'a [u8]> {
        let start = (name.as_ptr() as usize).checked_sub(self.attrs.as_ptr() as usize)?;
        let rest = self.attrs.get(start + name.len()..)?;
        let eq = super::find::byte(b'=', rest)?;
        let quoted = rest[eq + 1..].trim_ascii_start();
        let (&quote, value) = quoted.split_first()?;
        Some(&value[..super::find::byte(quote, value)?])
    }
}

/// Reads a SOAP 1.1 message from a byte slice without copying text that needs no unescaping.
#[derive(Debug)]
pub struct BodyReader<'a> {
    pub(super) scan: Scanner<'a>,
    pub(super) ns: Scope<'a>,
    /// Names of the elements open around the current position, outermost (the Envelope) first.
    pub(super) open: Vec<&'a [u8]>,
    pub(super) limits: Limits,
    /// An end tag was just read: the declarations of its element leave scope at the next read.
    closed: bool,
    /// Attribute names of the last tag with attributes, with their sort keys (reused, for the duplicate
    /// check; the header's `mustUnderstand` check finds a block's attributes here).
    pub(super) seen: Vec<(u128, &'a [u8])>,
    /// The open-addressing table of [`has_duplicates`] (reused).
    slots: Vec<u128>,
    /// Elements the Header may still open (unbounded outside it).
    pub(super) header_left: usize,
    /// Comments and processing instructions read so far.
    comments: usize,
    /// What the attribute and namespace scans have spent, and may (see `work.rs`).
    pub(super) work: Work,
    /// The scope's generation and the namespace (address, length) [`is_in`](Self::is_in) last found the
    /// default namespace to be: every field of a message asks the same question, and comparing URIs is the
    /// cost.
    ns_memo: Cell<(u64, usize, usize)>,
    /// The whole input as text: checked as UTF-8 once, as the message is opened, so that no byte of an
    /// accepted message escapes the check (not those of comments, PIs, unknown attributes or skipped header
    /// blocks either: XML 1.0 §4.3.3 makes a document with one bad byte not well-formed) and text cut from it
    /// needs no check of its own.
    doc: &'a str,
}

pub(super) fn is_blank(b: &[u8]) -> bool {
    b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
}

thread_local! {
    static OPEN: Cell<Vec<&'static [u8]>> = const { Cell::new(Vec::new()) };
    static SEEN: Cell<Vec<(u128, &'static [u8])>> = const { Cell::new(Vec::new()) };
}

impl Drop for BodyReader<'_> {
    fn drop(&mut self) {
        #[cfg(test)]
        work::note_spent(self.work.spent());
        recycle::keep(&OPEN, std::mem::take(&mut self.open));
        recycle::keep(&SEEN, std::mem::take(&mut self.seen));
    }
}

impl<'a> BodyReader<'a> {
    /// A reader at the start of `input`, which must be UTF-8 (refused as malformed XML, at its first bad
    /// byte, otherwise).
    pub(super) fn new(input: &'a [u8], limits: Limits) -> Result<Self, SoapError> {
        // simdutf8's fast check on the whole message (about 0.1 instruction a byte on ASCII); only a message
        // it refuses is checked again by std, for the position of the first bad byte.
        let doc = match simdutf8::basic::from_utf8(input) {
            Ok(doc) => doc,
            Err(_) => {
                let e = std::str::from_utf8(input).expect_err("simdutf8 refused it");
                return Err(SoapError::Xml {
                    pos: e.valid_up_to() as u64,
                    msg: format!("the message is not UTF-8 (XML 1.0 §4.3.3): {e}"),
                });
            }
        };
        Ok(Self {
            scan: Scanner::new(input),
            ns: Scope::default(),
            open: recycle::take(&OPEN, 16),
            limits,
            closed: false,
            seen: recycle::take(&SEEN, 8),
            slots: Vec::new(),
            header_left: usize::MAX,
            comments: 0,
            work: Work::new(input.len(), limits.max_work),
            ns_memo: Cell::new((u64::MAX, 0, 0)),
            doc,
        })
    }

    /// `raw` as text without checking it again, when it lies inside the input (a slice whose address is
    /// inside the input's is part of it); `None` otherwise (or if it cuts a character).
    #[inline]
    pub(super) fn checked_text(&self, raw: &[u8]) -> Option<&'a str> {
        let doc = self.doc;
        let start = (raw.as_ptr() as usize).wrapping_sub(doc.as_ptr() as usize);
        doc.get(start..start.checked_add(raw.len())?)
    }

    /// The whole input.
    pub(crate) fn input(&self) -> &'a [u8] {
        self.doc.as_bytes()
    }

    /// Offset of the next unread byte of the input.
    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.scan.position()
    }

    pub(super) fn xml_error(&self, msg: &str) -> SoapError {
        self.xml_error_at(self.scan.position() as u64, msg)
    }

    /// The error for the attribute at `offset` in `el`'s attributes.
    pub(super) fn xml_error_at_attr(
        &self,
        el: &Element<'_>,
        offset: usize,
        msg: &str,
    ) -> SoapError {
        self.xml_error_at((el.attrs_pos + offset) as u64, msg)
    }

    fn xml_error_at(&self, pos: u64, msg: &str) -> SoapError {
        SoapError::Xml {
            pos,
            msg: shorten_message(msg),
        }
    }

    pub(super) fn exceeded(&self, limit: Limit) -> SoapError {
        SoapError::Limit {
            path: String::new(),
            limit,
            max: self.limits.get(limit),
        }
    }

    /// The next event. Start and end tags must go through [`enter`](Self::enter) and
    /// [`leave`](Self::leave).
    #[inline]
    pub(super) fn event(&mut self) -> Result<Token<'a>, SoapError> {
        self.settle();
        let event = self
            .scan
            .next_token()
            .map_err(|ScanError { pos, msg }| SoapError::Xml {
                pos: pos as u64,
                msg: shorten_message(&msg),
            })?;
        if matches!(event, Token::Comment | Token::Pi) {
            self.comments += 1;
            if self.comments > self.limits.max_comments {
                return Err(self.exceeded(Limit::Comments));
            }
        }
        Ok(event)
    }

    /// Takes the declarations of the element whose end tag was just read out of scope.
    #[inline]
    pub(super) fn settle(&mut self) {
        if self.closed {
            self.ns.leave(self.open.len());
            self.closed = false;
        }
    }

    /// Bounds the elements read from now on by [`Limits::max_header_elements`] (`true`), or lifts the bound.
    pub(super) fn bound_header(&mut self, on: bool) {
        self.header_left = if on {
            self.limits.max_header_elements
        } else {
            usize::MAX
        };
    }

    /// Takes a start tag: one level deeper, its name and attributes checked, its namespace declarations in
    /// scope.
    #[inline]
    pub(super) fn enter(
        &mut self,
        tag: &'a [u8],
        name_len: usize,
        pos: usize,
    ) -> Result<Element<'a>, SoapError> {
        if self.open.len() == self.limits.max_depth {
            return Err(self.exceeded(Limit::Depth));
        }
        if self.header_left == 0 {
            return Err(self.exceeded(Limit::HeaderElements));
        }
        self.header_left -= 1;
        let (name, attrs) = tag.split_at(name_len);
        if name.len() > self.limits.max_name_len {
            return Err(self.exceeded(Limit::NameLength));
        }
        let Some(colon) = qname_colon(name) else {
            return Err(self.xml_error_at(pos as u64, "not a valid element name"));
        };
        self.open.push(name);
        let mut el = Element {
            name,
            local: colon.map_or(0, |i| i + 1),
            attrs,
            attrs_pos: pos + name.len(),
            prefixed_attrs: false,
        };
        if !attrs.is_empty() {
            el.prefixed_attrs = self.take_attributes(&el)?;
        }
        // Here, at every start tag the general path reads: the attributes just read, and the lookups since
        // the last tag.
        self.check_work()?;
        Ok(el)
    }

    /// The usual child, `<name>` right here (no prefix, no attributes: a name the schema gives needs no
    /// check), entered; `None` (nothing read) for anything else.
    #[inline]
    pub(super) fn plain_child(&mut self, name: &str) -> Result<Option<Element<'a>>, SoapError> {
        self.settle();
        match self.scan.open_plain(name.as_bytes()) {
            Some((tag, pos)) => self.enter_plain(tag, pos).map(Some),
            None => Ok(None),
        }
    }

    /// The usual leaf field, `<name>text</name>` right here, unprefixed, without attributes, in the default
    /// namespace `ns`, within every limit: its raw text (references not expanded) and where it ends, nothing
    /// consumed (see [`take_leaf`](Self::take_leaf)). Anything else is left for the general path. A leaf
    /// without attributes declares nothing, so taking it changes no scope.
    #[inline]
    pub(super) fn leaf(&mut self, ns: &str, name: &str) -> Option<(&'a [u8], usize)> {
        self.settle();
        let (text, next) = self.scan.leaf_here(name.as_bytes())?;
        (self.fits(1, name.len(), 0, 0) && self.default_is(ns)).then_some((text, next))
    }

    /// Whether the general path would let elements open here `depth` levels deep whose names (their own and
    /// their attributes') are at most `name_len` bytes, each with `attrs` attributes of which `decls` declare
    /// namespaces: the limits [`enter`](Self::enter) checks, checked before anything is read.
    #[inline(always)]
    pub(super) fn fits(&self, depth: usize, name_len: usize, attrs: usize, decls: usize) -> bool {
        let l = &self.limits;
        self.open.len() + depth <= l.max_depth
            && self.header_left > 0
            && name_len <= l.max_name_len
            && attrs <= l.max_attributes
            && decls <= l.max_namespace_declarations
            && self.ns.len() + decls <= l.max_namespaces_in_scope
    }

    /// Consumes the leaf [`leaf`](Self::leaf) found, counted as an element (as the general path counts it).
    #[inline]
    pub(super) fn take_leaf(&mut self, next: usize) {
        self.header_left -= 1;
        self.scan.seek(next);
    }

    /// [`leaf`](Self::leaf) as text, consumed: its references expanded and its characters checked, as the
    /// general path would (printable ASCII without references is its own value). `None`, nothing consumed,
    /// for text the general path must read or refuse.
    #[inline]
    pub(super) fn text_leaf(&mut self, ns: &str, name: &str) -> Option<Cow<'a, str>> {
        let (raw, next) = self.leaf(ns, name)?;
        let text = self.text_of(raw).ok()?;
        let value = if is_plain(raw) {
            Cow::Borrowed(text)
        } else {
            let value = super::unescape::unescape(text).ok()?;
            xsd::check_chars(&value).ok()?;
            value
        };
        self.take_leaf(next);
        Some(value)
    }

    /// True if unprefixed names here resolve to `ns` (remembered: see [`is_in`](Self::is_in)).
    #[inline]
    pub(super) fn default_is(&self, ns: &str) -> bool {
        let memo = (self.ns.generation(), ns.as_ptr() as usize, ns.len());
        if self.ns_memo.get() == memo {
            return true;
        }
        match self.lookup(None) {
            Resolved::Bound(n) if n == ns.as_bytes() => {
                self.ns_memo.set(memo);
                true
            }
            Resolved::NoNamespace => ns.is_empty(),
            _ => false,
        }
    }

    /// [`enter`](Self::enter) for a start tag without attributes whose name is known to be valid.
    #[inline]
    pub(super) fn enter_plain(
        &mut self,
        name: &'a [u8],
        pos: usize,
    ) -> Result<Element<'a>, SoapError> {
        if self.open.len() == self.limits.max_depth {
            return Err(self.exceeded(Limit::Depth));
        }
        if self.header_left == 0 {
            return Err(self.exceeded(Limit::HeaderElements));
        }
        self.header_left -= 1;
        if name.len() > self.limits.max_name_len {
            return Err(self.exceeded(Limit::NameLength));
        }
        self.open.push(name);
        Ok(Element {
            name,
            local: 0,
            attrs: &[],
            attrs_pos: pos + name.len(),
            prefixed_attrs: false,
        })
    }

    /// Consumes the innermost element's end tag, which [`Scanner::close_here`] found ending at `next`.
    #[inline]
    pub(super) fn close_at(&mut self, next: usize) {
        self.scan.seek(next);
        self.open.pop();
        self.closed = true;
    }

    /// Takes an end tag, which must close the innermost open element.
    #[inline]
    pub(super) fn leave(&mut self, name: &[u8]) -> Result<(), SoapError> {
        match self.open.pop() {
            Some(open) if same(open, name) => {
                self.closed = true;
                Ok(())
            }
            Some(open) => Err(self.xml_error(&format!(
                "end tag </{}> does not close <{}>",
                shorten(name),
                shorten(open)
            ))),
            None => Err(self.xml_error("end tag without a start tag")),
        }
    }

    /// Elements open around the current position (the Envelope is 1).
    pub(super) fn depth(&self) -> usize {
        self.open.len()
    }

    /// Checks every attribute of `el` (syntax, count, name length, no duplicates) and brings its namespace
    /// declarations into scope. True if it has a prefixed attribute other than a declaration.
    fn take_attributes(&mut self, el: &Element<'a>) -> Result<bool, SoapError> {
        let mut seen = std::mem::take(&mut self.seen);
        seen.clear();
        let result = self.declare_all(el, &mut seen).and_then(|prefixed| {
            if has_duplicates(&mut seen, &mut self.slots) {
                Err(self.xml_error_at(el.attrs_pos as u64, "duplicate attribute"))
            } else {
                Ok(prefixed)
            }
        });
        self.seen = seen;
        result
    }

    fn declare_all(
        &mut self,
        el: &Element<'a>,
        seen: &mut Vec<(u128, &'a [u8])>,
    ) -> Result<bool, SoapError> {
        let mut declarations = 0;
        let mut prefixed = false;
        for attr in Attrs::new(el.attrs) {
            let attr =
                attr.map_err(|(at, why)| self.xml_error_at((el.attrs_pos + at) as u64, why))?;
            if seen.len() == self.limits.max_attributes {
                return Err(self.exceeded(Limit::Attributes));
            }
            if attr.name.len() > self.limits.max_name_len {
                return Err(self.exceeded(Limit::NameLength));
            }
            seen.push((sort_key(attr.name), attr.name));
            let prefix = match attr.split_name() {
                (None, b"xmlns") => None,
                (Some(b"xmlns"), local) => Some(local),
                (Some(_), _) => {
                    prefixed = true;
                    continue;
                }
                (None, _) => continue,
            };
            declarations += 1;
            if declarations > self.limits.max_namespace_declarations {
                return Err(self.exceeded(Limit::NamespaceDeclarations));
            }
            if self.ns.len() == self.limits.max_namespaces_in_scope {
                return Err(self.exceeded(Limit::NamespacesInScope));
            }
            let pos = (el.attrs_pos + attr.offset) as u64;
            let uri = if is_plain(attr.value) {
                Cow::Borrowed(attr.value)
            } else {
                match attr.normalized_value() {
                    Ok(Cow::Borrowed(s)) => Cow::Borrowed(s.as_bytes()),
                    Ok(Cow::Owned(s)) => Cow::Owned(s.into_bytes()),
                    Err(e) => return Err(self.xml_error_at(pos, &e)),
                }
            };
            self.ns
                .declare(prefix, uri, self.open.len())
                .map_err(|why| self.xml_error_at(pos, why))?;
        }
        self.work
            .charge(seen.len() as u64 * work::ATTRIBUTE + declarations as u64 * work::DECLARATION);
        Ok(prefixed)
    }

    fn resolve(&self, el: &Element<'_>) -> Resolved<'_> {
        self.lookup(el.prefix())
    }

    /// What `prefix` (`None`: unprefixed) stands for here. A prefixed lookup is charged the bindings it
    /// examined (the default namespace is held apart: one step, not charged).
    #[inline]
    pub(super) fn lookup(&self, prefix: Option<&[u8]>) -> Resolved<'_> {
        if prefix.is_none() {
            return self.ns.default_namespace();
        }
        let (found, probes) = self.ns.resolve(prefix);
        self.work.charge(probes as u64 * work::PROBE);
        found
    }

    /// Refuses the message once the attribute and namespace scans have spent more than its budget.
    #[inline]
    pub(super) fn check_work(&self) -> Result<(), SoapError> {
        if self.work.within() {
            Ok(())
        } else {
            Err(self.exceeded(Limit::Work))
        }
    }

    /// True if `el` resolves to namespace `ns` (`""` meaning no namespace).
    #[inline]
    pub fn is_in(&self, el: &Element<'_>, ns: &str) -> bool {
        // Remembered for unprefixed names only (the default namespace: what nearly every field uses).
        let memo = (self.ns.generation(), ns.as_ptr() as usize, ns.len());
        if el.local == 0 && self.ns_memo.get() == memo {
            return true;
        }
        self.looked_up_in(el, ns, memo)
    }

    /// [`is_in`](Self::is_in) by a lookup, remembered for an unprefixed name under `memo`.
    fn looked_up_in(&self, el: &Element<'_>, ns: &str, memo: (u64, usize, usize)) -> bool {
        let unprefixed = el.local == 0;
        match self.resolve(el) {
            Resolved::Bound(n) if n == ns.as_bytes() => {
                if unprefixed {
                    self.ns_memo.set(memo);
                }
                true
            }
            Resolved::Bound(_) => false,
            Resolved::NoNamespace => ns.is_empty(),
            Resolved::Undeclared => false,
        }
    }

    /// The namespace of `el` as text, for error messages (shortened if long).
    pub(crate) fn namespace_of(&self, el: &Element<'_>) -> String {
        match self.resolve(el) {
            Resolved::Bound(n) => shorten(n),
            Resolved::NoNamespace => String::new(),
            Resolved::Undeclared => format!(
                "(undeclared prefix '{}')",
                String::from_utf8_lossy(el.prefix().unwrap_or_default())
            ),
        }
    }

    /// The value of the attribute `name` (in no namespace) of `el`, if present, references expanded.
    pub fn attribute(&self, el: &Element<'a>, name: &str) -> Result<Option<String>, SoapError> {
        let Some(attr) = el.attributes().find(|a| a.name == name.as_bytes()) else {
            return Ok(None);
        };
        let value = match self.checked_text(attr.value) {
            Some(text) => normalize(text),
            None => attr.normalized_value(),
        }
        .map_err(|e| self.xml_error_at((el.attrs_pos + attr.offset) as u64, &e))?;
        xsd::check_chars(&value).map_err(|c| SoapError::InvalidContent {
            field: format!("@{name}"),
            reason: format!("character U+{:04X} is not allowed in XML", u32::from(c)),
        })?;
        Ok(Some(value.into_owned()))
    }

    /// The next child element of the current element, or `None` once its end tag is consumed.
    #[inline]
    pub fn next_child(&mut self) -> Result<Option<Element<'a>>, SoapError> {
        self.settle();
        // The usual end, `</name>` of the innermost element right here.
        if let Some(&open) = self.open.last() {
            if let Some(next) = self.scan.close_here(open) {
                self.close_at(next);
                return Ok(None);
            }
        }
        loop {
            match self.event()? {
                Token::Start { tag, name_len, pos } => {
                    return self.enter(tag, name_len, pos).map(Some)
                }
                Token::End(name) => {
                    self.leave(name)?;
                    return Ok(None);
                }
                Token::Text(t) if is_blank(t) => {}
                Token::Text(_) | Token::CData(_) => {
                    return Err(SoapError::UnexpectedText(String::new()))
                }
                Token::Comment | Token::Pi => {}
                Token::DocType => return Err(SoapError::Doctype),
                Token::Eof => return Err(self.xml_error("unexpected end of document")),
                Token::Decl(_) => return Err(self.xml_error("unexpected markup")),
            }
        }
    }

    /// Reads the next child, which must be `{ns}name`. Errors have an empty path: callers add `name`.
    pub fn child(
        &mut self,
        ns: &'static str,
        name: &'static str,
    ) -> Result<Element<'a>, SoapError> {
        let el = match self.plain_child(name)? {
            Some(el) => el,
            None => match self.next_child()? {
                Some(el) => el,
                None => return Err(SoapError::MissingField(String::new())),
            },
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
        if let Some(raw) = self.plain_text()? {
            return Ok(Cow::Borrowed(self.utf8(raw)?));
        }
        self.general_text()
    }

    /// As [`text`](Self::text), as bytes: plain text needs no UTF-8 check (it is ASCII).
    pub(crate) fn text_bytes(&mut self) -> Result<Cow<'a, [u8]>, SoapError> {
        if let Some(raw) = self.plain_text()? {
            return Ok(Cow::Borrowed(raw));
        }
        Ok(match self.general_text()? {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        })
    }

    /// The usual field, plain text and the end tag right after it: consumed, the text returned. Anything
    /// else is left for [`general_text`](Self::general_text).
    #[inline]
    fn plain_text(&mut self) -> Result<Option<&'a [u8]>, SoapError> {
        self.settle();
        let Some(&open) = self.open.last() else {
            return Ok(None);
        };
        // An empty element (`<name/>`, its end pending): no text.
        if self.scan.end_pending() {
            let name = self.scan.take_pending_end();
            debug_assert!(
                name.is_some_and(|n| same(n, open)),
                "the innermost element's end"
            );
            self.open.pop();
            self.closed = true;
            // Empty, and cut from the input: text there needs no check of its own.
            let at = self.position();
            return Ok(Some(&self.input()[at..at]));
        }
        match self.scan.text_then_close(open) {
            Some((text, next)) if is_plain(text) => {
                self.scan.seek(next);
                self.open.pop();
                self.closed = true;
                Ok(Some(text))
            }
            _ => Ok(None),
        }
    }

    fn general_text(&mut self) -> Result<Cow<'a, str>, SoapError> {
        let mut text: Cow<'a, str> = Cow::Borrowed("");
        // Whether every piece so far was plain (and so needs no character check).
        let mut plain = true;
        loop {
            let piece: Cow<'a, str> = match self.event()? {
                // Printable ASCII without references (the usual field) needs no unescaping and no
                // character check: one pass decides.
                Token::Text(t) if plain && is_plain(t) => Cow::Borrowed(self.utf8(t)?),
                Token::Text(t) => {
                    plain = false;
                    self.unescape(t)?
                }
                Token::CData(c) => {
                    plain = false;
                    match c {
                        Cow::Borrowed(b) => Cow::Borrowed(self.utf8(b)?),
                        Cow::Owned(b) => Cow::Owned(
                            String::from_utf8(b).map_err(|e| self.xml_error(&e.to_string()))?,
                        ),
                    }
                }
                Token::End(name) => {
                    self.leave(name)?;
                    break;
                }
                Token::Start { tag, name_len, pos } => {
                    let el = self.enter(tag, name_len, pos)?;
                    return Err(self.unexpected(&el));
                }
                Token::Comment | Token::Pi => continue,
                Token::DocType => return Err(SoapError::Doctype),
                Token::Eof => return Err(self.xml_error("unexpected end of document")),
                Token::Decl(_) => return Err(self.xml_error("unexpected markup")),
            };
            if text.is_empty() {
                text = piece;
            } else {
                text.to_mut().push_str(&piece);
            }
        }
        if !plain {
            xsd::check_chars(&text).map_err(|c| SoapError::InvalidContent {
                field: String::new(),
                reason: format!("character U+{:04X} is not allowed in XML", u32::from(c)),
            })?;
        }
        Ok(text)
    }

    pub(super) fn utf8(&self, raw: &'a [u8]) -> Result<&'a str, SoapError> {
        self.text_of(raw)
            .map_err(|e| self.xml_error(&e.to_string()))
    }

    /// `raw` as text: cut from the checked input, or checked on its own (which finds the bad bytes).
    #[inline]
    pub(super) fn text_of(&self, raw: &'a [u8]) -> Result<&'a str, std::str::Utf8Error> {
        match self.checked_text(raw) {
            Some(text) => Ok(text),
            None => std::str::from_utf8(raw),
        }
    }

    /// Character data with its entity and character references expanded.
    fn unescape(&self, raw: &'a [u8]) -> Result<Cow<'a, str>, SoapError> {
        super::unescape::unescape(self.utf8(raw)?).map_err(|e| self.xml_error(&e.to_string()))
    }

    /// The text of the current element as an xsd:QName, its prefix resolved through the declarations in
    /// scope at that element; its parts borrowed from the input, or (when references were expanded) put in
    /// `arena`.
    pub fn qname_in(&mut self, arena: &'a Bump) -> Result<xsd::QName<'a>, SoapError> {
        let text = self.text_in(arena)?;
        let invalid = |reason| SoapError::InvalidField {
            field: String::new(),
            reason,
        };
        let (prefix, local) = xsd::QName::split_lexical(text).map_err(invalid)?;
        // The end tag was just read; the element's declarations stay in scope until the next read.
        let namespace: &'a str = match self.lookup(prefix.map(str::as_bytes)) {
            // Bound URIs come from attribute values, read as text: the lossy path never changes them.
            Resolved::Bound(n) => match self.checked_text(n) {
                Some(uri) => uri,
                None => arena.alloc_str(&String::from_utf8_lossy(n)),
            },
            Resolved::NoNamespace => "",
            Resolved::Undeclared => {
                return Err(invalid(XsdError::because(
                    "QName",
                    text,
                    "undeclared prefix",
                )))
            }
        };
        Ok(xsd::QName::new(namespace, local))
    }

    /// [`text`](Self::text), borrowed from the input or (references expanded) put in `arena`.
    pub(crate) fn text_in(&mut self, arena: &'a Bump) -> Result<&'a str, SoapError> {
        Ok(match self.text()? {
            Cow::Borrowed(s) => s,
            Cow::Owned(s) => arena.alloc_str(&s),
        })
    }

    /// All text inside the current element, its descendants' included, up to its end tag.
    pub(crate) fn deep_text(&mut self) -> Result<String, SoapError> {
        let mut text = String::new();
        self.consume_rest(Some(&mut text))?;
        Ok(text)
    }

    /// Skips the rest of the current element, children included (within the same limits).
    pub fn skip(&mut self) -> Result<(), SoapError> {
        self.consume_rest(None)
    }

    fn consume_rest(&mut self, mut text: Option<&mut String>) -> Result<(), SoapError> {
        let target = self.depth().saturating_sub(1);
        while self.depth() > target {
            match self.event()? {
                Token::Start { tag, name_len, pos } => {
                    self.enter(tag, name_len, pos)?;
                }
                Token::End(name) => self.leave(name)?,
                Token::Text(t) => {
                    if let Some(text) = text.as_deref_mut() {
                        text.push_str(&self.unescape(t)?);
                    }
                }
                Token::CData(c) => {
                    if let Some(text) = text.as_deref_mut() {
                        text.push_str(&String::from_utf8_lossy(&c));
                    }
                }
                Token::DocType => return Err(SoapError::Doctype),
                Token::Eof => return Err(self.xml_error("unexpected end of document")),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether `raw` is printable ASCII without `&`: text that is its own value and needs no checks. Eight bytes
/// at a time (bit tricks on a `u64`: any byte at or above 0x7F, below 0x20, or equal to `&`).
#[inline]
pub(super) fn is_plain(raw: &[u8]) -> bool {
    use crate::swar::{below, equal, word, HI, LO};
    let byte_ok = |b: u8| (0x20..0x7F).contains(&b) & (b != b'&');
    let mut chunks = raw.chunks_exact(8);
    let mut bad = 0u64;
    for c in &mut chunks {
        let x = word(c, 0);
        // At or above 0x7F: adding 1 sets the high bit (or it was set already).
        bad |= (x.wrapping_add(LO) | x) | below(x, 0x20) | equal(x, b'&');
    }
    bad & HI == 0 && chunks.remainder().iter().all(|&b| byte_ok(b))
}

/// An error message for a fault, cut after 300 bytes: quick-xml's messages quote the input (a whole unknown
/// entity name, say), and no input may make a fault huge. Found by fuzzing.
fn shorten_message(msg: &str) -> String {
    const MAX: usize = 300;
    if msg.len() <= MAX {
        return msg.to_owned();
    }
    let mut end = MAX;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &msg[..end], msg.len())
}

/// `text` for a fault: lossily decoded, and cut after 100 bytes so that no input makes a fault huge.
pub(super) fn shorten(text: &[u8]) -> String {
    const MAX: usize = 100;
    if text.len() <= MAX {
        return String::from_utf8_lossy(text).into_owned();
    }
    format!(
        "{}… ({} bytes)",
        String::from_utf8_lossy(&text[..MAX]),
        text.len()
    )
}

/// A key that orders names cheaply: their length and first 14 bytes. Equal names have equal keys; names of up
/// to 14 bytes with equal keys are equal. Built from word loads: a copy of a variable length was a `memcpy`
/// call per attribute, 6 % of a tag flooded with attributes.
fn sort_key(name: &[u8]) -> u128 {
    let head = name.len().min(14);
    let lo = u128::from(crate::swar::short(&name[..head.min(8)]));
    let hi = if head > 8 {
        u128::from(crate::swar::short(&name[8..head]))
    } else {
        0
    };
    let len = name.len().min(usize::from(u16::MAX)) as u128;
    lo | hi << 64 | len << 112
}

/// Whether two of `names` are equal. Small tags are compared pairwise; bigger ones go into a hash table of
/// their keys (linear in their number), and only when that cannot decide (two long names with one key) or its
/// probes grow past a bound (keys an attacker chose to collide) are they sorted by key (whole names only where
/// keys tie), which keeps this O(n log n) whatever the names. The reader bounds n.
fn has_duplicates(names: &mut [(u128, &[u8])], slots: &mut Vec<u128>) -> bool {
    if names.len() <= 8 {
        return names
            .iter()
            .enumerate()
            .any(|(i, a)| names[i + 1..].iter().any(|b| a.0 == b.0 && a.1 == b.1));
    }
    match duplicate_key(names, slots) {
        Some(found) => found,
        None => {
            names.sort_unstable();
            names.windows(2).any(|w| w[0] == w[1])
        }
    }
}

/// [`has_duplicates`] by hashing the keys (never 0: a name has a length): `None` if it cannot decide.
fn duplicate_key(names: &[(u128, &[u8])], slots: &mut Vec<u128>) -> Option<bool> {
    let bits = (2 * names.len()).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    slots.clear();
    slots.resize(mask + 1, 0);
    let mut probes_left = 4 * names.len();
    for &(key, _) in names {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        let mut i = (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
        loop {
            match slots[i] {
                0 => {
                    slots[i] = key;
                    break;
                }
                // Equal keys are equal names up to 14 bytes; longer ones need the whole names.
                k if k == key => return ((key >> 112) as usize <= 14).then_some(true),
                _ => {
                    probes_left = probes_left.checked_sub(1)?;
                    i = (i + 1) & mask;
                }
            }
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::{has_duplicates, is_plain, sort_key};

    #[test]
    fn duplicates_are_found_whatever_the_names() {
        let long = |i: usize| format!("a_long_common_prefix_{i}");
        let sets: Vec<Vec<String>> = vec![
            (0..9).map(|i| format!("a{i}")).collect(),
            (0..64).map(|i| format!("a{i}")).collect(),
            (0..64).map(long).collect(),
            (0..200).map(|i| format!("n{i:03}")).collect(),
        ];
        let mut slots = Vec::new();
        for set in sets {
            let names = |set: &[String]| -> Vec<(u128, Vec<u8>)> {
                set.iter()
                    .map(|n| (sort_key(n.as_bytes()), n.as_bytes().to_vec()))
                    .collect()
            };
            let check = |owned: &[(u128, Vec<u8>)], slots: &mut Vec<u128>| {
                let mut v: Vec<(u128, &[u8])> =
                    owned.iter().map(|(k, n)| (*k, n.as_slice())).collect();
                has_duplicates(&mut v, slots)
            };
            assert!(!check(&names(&set), &mut slots), "{set:?}");
            for dup in [0, set.len() / 2, set.len() - 1] {
                let mut with = set.clone();
                with.push(set[dup].clone());
                assert!(check(&names(&with), &mut slots), "{dup} of {set:?}");
            }
        }
    }

    #[test]
    fn sort_keys_hold_the_first_14_bytes_and_the_length() {
        let slow = |name: &[u8]| {
            let mut key = [0u8; 16];
            let head = &name[..name.len().min(14)];
            key[..head.len()].copy_from_slice(head);
            key[14..].copy_from_slice(&(name.len() as u16).to_le_bytes());
            u128::from_le_bytes(key)
        };
        for n in 0..=20 {
            let name: Vec<u8> = (0..n).map(|i| 0xA0 + i as u8).collect();
            assert_eq!(sort_key(&name), slow(&name), "{n}");
        }
    }

    #[test]
    fn plain_text_is_printable_ascii_without_references() {
        let slow = |b: &[u8]| b.iter().all(|&c| (0x20..0x7F).contains(&c) && c != b'&');
        for len in [0, 1, 7, 8, 9, 16, 23] {
            let base = vec![b'a'; len];
            assert!(is_plain(&base));
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut t = base.clone();
                    t[at] = b;
                    assert_eq!(is_plain(&t), slow(&t), "byte {b:#x} at {at} of {len}");
                }
            }
        }
    }
}
