//! Writing SOAP 1.1 envelopes and plain elements into a caller's buffer. Every function appends.

use super::SOAP11_ENV_NS;
use crate::xsd::{write_attr, write_text};

/// Appends the XML declaration, `<soap:Envelope …>` and `<soap:Body>`.
pub fn envelope_start(out: &mut Vec<u8>) {
    out.extend_from_slice(
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><soap:Envelope xmlns:soap=\"",
    );
    out.extend_from_slice(SOAP11_ENV_NS.as_bytes());
    out.extend_from_slice(b"\"><soap:Body>");
}

/// Appends `</soap:Body></soap:Envelope>`.
pub fn envelope_end(out: &mut Vec<u8>) {
    out.extend_from_slice(b"</soap:Body></soap:Envelope>");
}

/// Appends `<name>`.
#[inline]
pub fn start_element(out: &mut Vec<u8>, name: &str) {
    out.push(b'<');
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

/// Appends `<name xmlns="ns">`, making `ns` the default namespace of the element and its content.
pub fn start_element_ns(out: &mut Vec<u8>, name: &str, ns: &str) {
    out.push(b'<');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b" xmlns=\"");
    write_attr(out, ns);
    out.extend_from_slice(b"\">");
}

/// Appends `</name>`.
#[inline]
pub fn end_element(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b"</");
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

/// Appends `<name>` + `write(out)` + `</name>`; `write` appends the already-escaped content.
#[inline]
pub fn element(out: &mut Vec<u8>, name: &str, write: impl FnOnce(&mut Vec<u8>)) {
    start_element(out, name);
    write(out);
    end_element(out, name);
}

/// Appends `<name>text</name>` with `text` escaped.
#[inline]
pub fn text_element(out: &mut Vec<u8>, name: &str, text: &str) {
    element(out, name, |out| write_text(out, text));
}

/// [`element`] for a literal name: the tags are constants, two copies instead of six pushes.
macro_rules! el {
    ($out:expr, $name:literal, $write:expr) => {{
        let out: &mut Vec<u8> = $out;
        out.extend_from_slice(concat!("<", $name, ">").as_bytes());
        ($write)(&mut *out);
        out.extend_from_slice(concat!("</", $name, ">").as_bytes());
    }};
}

/// [`text_element`] for a literal name.
macro_rules! text_el {
    ($out:expr, $name:literal, $text:expr) => {
        $crate::soap::el!($out, $name, |out: &mut Vec<u8>| {
            $crate::xsd::write_text(out, $text)
        })
    };
}

pub(crate) use {el, text_el};
