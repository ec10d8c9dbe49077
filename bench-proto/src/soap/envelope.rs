//! Opening and closing a SOAP 1.1 envelope: the prolog (no DOCTYPE, UTF-8 only), the Envelope, its Header
//! (refusing blocks marked mustUnderstand), the Body; and nothing but comments after the Envelope.

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

use super::reader::is_blank;
use super::{BodyReader, Element, SoapError, SOAP11_ENV_NS};
use crate::xsd;

fn truthy(v: &[u8]) -> bool {
    matches!(v, b"1" | b"true")
}

impl<'a> BodyReader<'a> {
    /// Reads up to the inside of `soap:Body`, refusing header blocks marked `mustUnderstand`.
    pub fn open(input: &'a [u8]) -> Result<Self, SoapError> {
        // `cargo xtask gate --inject-slowdown`: an extra pass over the buffer, a regression to catch.
        #[cfg(wsbench_gate_selfcheck)]
        std::hint::black_box(
            input
                .iter()
                .fold(0u64, |h, &b| h.rotate_left(5) ^ u64::from(b)),
        );
        Self::open_inner(input, true)
    }

    /// As [`open`](Self::open), but ignoring `mustUnderstand` (for reading faults, whatever the headers).
    pub fn open_ignoring_headers(input: &'a [u8]) -> Result<Self, SoapError> {
        Self::open_inner(input, false)
    }

    fn open_inner(input: &'a [u8], check_headers: bool) -> Result<Self, SoapError> {
        let mut r = NsReader::from_reader(input);
        let config = r.config_mut();
        config.expand_empty_elements = true;
        config.check_end_names = true;
        config.trim_text(false);
        let mut me = Self { r, depth: 0 };
        let envelope = me.prolog()?;
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
        let mut child = me.next_child()?.ok_or(SoapError::NoBody)?;
        if child.local_name() == b"Header" && me.is_in(&child, SOAP11_ENV_NS) {
            me.header(check_headers)?;
            child = me.next_child()?.ok_or(SoapError::NoBody)?;
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
                Event::Decl(d) => {
                    if let Some(Ok(enc)) = d.encoding() {
                        if !enc.eq_ignore_ascii_case(b"utf-8") && !enc.eq_ignore_ascii_case(b"utf8")
                        {
                            return Err(SoapError::Encoding(
                                String::from_utf8_lossy(&enc).into_owned(),
                            ));
                        }
                    }
                }
                Event::DocType(_) => return Err(SoapError::Doctype),
                Event::Text(t) if is_blank(&t) => {}
                Event::Comment(_) | Event::PI(_) => {}
                Event::Start(start) => {
                    self.depth = 1;
                    return Ok(Element { start });
                }
                Event::Eof => return Err(self.xml_error("empty document")),
                _ => return Err(self.xml_error("content before the root element")),
            }
        }
    }

    /// Checks each header block for `mustUnderstand` and skips it; we understand none.
    fn header(&mut self, check: bool) -> Result<(), SoapError> {
        while let Some(block) = self.next_child()? {
            if check {
                let mut must = false;
                let mut for_us = true;
                for attr in block.start.attributes() {
                    let attr = attr.map_err(|e| self.xml_error(&e.to_string()))?;
                    let (ns, local) = self.r.resolve_attribute(attr.key);
                    if !matches!(ns, ResolveResult::Bound(n) if n.as_ref() == SOAP11_ENV_NS.as_bytes())
                    {
                        continue;
                    }
                    match local.as_ref() {
                        b"mustUnderstand" => must = truthy(xsd::collapse_bytes(&attr.value)),
                        // Blocks for another actor are not ours to refuse.
                        b"actor" => {
                            for_us = &*attr.value == b"http://schemas.xmlsoap.org/soap/actor/next"
                        }
                        _ => {}
                    }
                }
                if must && for_us {
                    let ns = self.namespace_of(&block);
                    return Err(SoapError::MustUnderstand(format!(
                        "{{{ns}}}{}",
                        String::from_utf8_lossy(block.local_name())
                    )));
                }
            }
            self.skip()?;
        }
        Ok(())
    }

    /// After the Body's single child: checks the Body and Envelope end and nothing but comments follow.
    pub fn finish(mut self) -> Result<(), SoapError> {
        if let Some(el) = self.next_child()? {
            return Err(self.unexpected(&el).at("Body"));
        }
        if let Some(el) = self.next_child()? {
            return Err(self.unexpected(&el).at("Envelope"));
        }
        loop {
            match self.event()? {
                Event::Eof => return Ok(()),
                Event::Text(t) if is_blank(&t) => {}
                Event::Comment(_) | Event::PI(_) => {}
                _ => return Err(self.xml_error("content after the Envelope")),
            }
        }
    }
}
