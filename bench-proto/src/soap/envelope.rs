//! Opening and closing a SOAP 1.1 envelope: the prolog (no DOCTYPE, UTF-8 only), the Envelope, its Header
//! (refusing blocks marked mustUnderstand), the Body; and nothing but comments after the Envelope.

use super::find;
use super::ns::Resolved;
use super::reader::is_blank;
use super::scan::same;
use super::scan::Token;
use super::{BodyReader, Element, Limits, SoapError, SOAP11_ENV_NS};
use crate::xsd;

fn truthy(v: &[u8]) -> bool {
    matches!(v, b"1" | b"true")
}

impl<'a> BodyReader<'a> {
    /// Reads up to the inside of `soap:Body`, refusing header blocks marked `mustUnderstand`; within the
    /// default [`Limits`].
    pub fn open(input: &'a [u8]) -> Result<Self, SoapError> {
        Self::open_with(input, &Limits::default())
    }

    /// As [`open`](Self::open), within `limits`.
    pub fn open_with(input: &'a [u8], limits: &Limits) -> Result<Self, SoapError> {
        // `cargo xtask gate --inject-slowdown`: an extra pass over the buffer, a regression to catch.
        #[cfg(wsbench_gate_selfcheck)]
        std::hint::black_box(
            input
                .iter()
                .fold(0u64, |h, &b| h.rotate_left(5) ^ u64::from(b)),
        );
        Self::open_inner(input, limits, true)
    }

    /// As [`open`](Self::open), but ignoring `mustUnderstand` (for reading faults, whatever the headers).
    pub(crate) fn open_ignoring_headers(input: &'a [u8]) -> Result<Self, SoapError> {
        Self::open_inner(input, &Limits::default(), false)
    }

    fn open_inner(
        input: &'a [u8],
        limits: &Limits,
        check_headers: bool,
    ) -> Result<Self, SoapError> {
        let mut me = Self::new(input, *limits)?;
        if me.usual_envelope() {
            return Ok(me);
        }
        let envelope = me.prolog().map_err(|e| e.at("Envelope"))?;
        if !me.is_in(&envelope, SOAP11_ENV_NS) {
            let ns = me.namespace_of(&envelope);
            if envelope.local_name() == b"Envelope" {
                return Err(SoapError::VersionMismatch(ns));
            }
            let local = String::from_utf8_lossy(envelope.local_name()).into_owned();
            return Err(SoapError::NotEnvelope { ns, local });
        }
        if envelope.local_name() != b"Envelope" {
            let local = String::from_utf8_lossy(envelope.local_name()).into_owned();
            return Err(SoapError::NotEnvelope {
                ns: SOAP11_ENV_NS.into(),
                local,
            });
        }
        let at_envelope = |e: SoapError| e.at("Envelope");
        let mut child = me
            .next_child()
            .map_err(at_envelope)?
            .ok_or(SoapError::NoBody)?;
        if child.local_name() == b"Header" && me.is_in(&child, SOAP11_ENV_NS) {
            me.header(check_headers)
                .map_err(|e| e.at("Header").at("Envelope"))?;
            child = me
                .next_child()
                .map_err(at_envelope)?
                .ok_or(SoapError::NoBody)?;
        }
        if child.local_name() != b"Body" {
            return Err(SoapError::UnexpectedElement {
                path: "Envelope".into(),
                found: child.describe(),
                expected: Some("Body"),
            });
        }
        if !me.is_in(&child, SOAP11_ENV_NS) {
            let found = me.namespace_of(&child);
            return Err(SoapError::WrongNamespace {
                path: "Envelope/Body".into(),
                expected: SOAP11_ENV_NS,
                found,
            });
        }
        Ok(me)
    }

    /// Skips the XML declaration, comments and PIs before the root; returns the root element.
    fn prolog(&mut self) -> Result<Element<'a>, SoapError> {
        loop {
            match self.event()? {
                Token::Decl(encoding) => {
                    if let Some(enc) = encoding {
                        if !enc.eq_ignore_ascii_case(b"utf-8") && !enc.eq_ignore_ascii_case(b"utf8")
                        {
                            return Err(SoapError::Encoding(super::reader::shorten(&enc)));
                        }
                    }
                }
                Token::DocType => return Err(SoapError::Doctype),
                Token::Text(t) if is_blank(t) => {}
                Token::Comment | Token::Pi => {}
                Token::Start { tag, name_len, pos } => return self.enter(tag, name_len, pos),
                Token::Eof => return Err(self.xml_error("empty document")),
                _ => return Err(self.xml_error("content before the root element")),
            }
        }
    }

    /// Checks each header block for `mustUnderstand` and skips it; we understand none.
    fn header(&mut self, check: bool) -> Result<(), SoapError> {
        self.bound_header(true);
        while let Some(block) = self.next_child()? {
            if check && self.must_understand(&block) {
                let ns = self.namespace_of(&block);
                return Err(SoapError::MustUnderstand(format!(
                    "{{{ns}}}{}",
                    String::from_utf8_lossy(block.local_name())
                )));
            }
            self.skip()?;
        }
        self.bound_header(false);
        Ok(())
    }

    /// Whether `block` is marked `soap:mustUnderstand` and addressed to us (no `soap:actor`, or `next`): of
    /// its attribute names, still in `seen` from its start tag, the prefixed `mustUnderstand` and `actor`
    /// are read again and looked up (several bound to the envelope's namespace under other prefixes: any
    /// that says so makes it a must).
    fn must_understand(&self, block: &Element<'a>) -> bool {
        if !block.has_prefixed_attributes() {
            return false;
        }
        let mut must = false;
        let mut for_us = true;
        for &(_, name) in &self.seen {
            let Some(colon) = find::byte(b':', name) else {
                continue;
            };
            let (prefix, local) = (&name[..colon], &name[colon + 1..]);
            let is_must = same(local, b"mustUnderstand");
            if !is_must && !same(local, b"actor") {
                continue;
            }
            if self.lookup(Some(prefix)) != Resolved::Bound(SOAP11_ENV_NS.as_bytes()) {
                continue;
            }
            let value = block.value_after(name).unwrap_or_default();
            if is_must {
                must |= truthy(xsd::collapse_bytes(value));
            } else {
                // Blocks for another actor are not ours to refuse.
                for_us = value == b"http://schemas.xmlsoap.org/soap/actor/next";
            }
        }
        must && for_us
    }

    /// After the Body's single child: checks the Body and Envelope end and nothing but comments follow.
    pub fn finish(mut self) -> Result<(), SoapError> {
        // The work of the fast paths, which check nothing, and of the lookups since the last start tag.
        self.check_work()?;
        if self.usual_end() {
            return Ok(());
        }
        if let Some(el) = self.next_child()? {
            return Err(self.unexpected(&el).at("Body"));
        }
        if let Some(el) = self.next_child()? {
            return Err(self.unexpected(&el).at("Envelope"));
        }
        loop {
            match self.event()? {
                Token::Eof => return Ok(()),
                Token::Text(t) if is_blank(t) => {}
                Token::Comment | Token::Pi => {}
                _ => return Err(self.xml_error("content after the Envelope")),
            }
        }
    }
}
