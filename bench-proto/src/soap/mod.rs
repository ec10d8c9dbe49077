//! SOAP 1.1 envelopes: a namespace-correct, bounded pull reader for request and response bodies, envelope
//! writing helpers, and faults.

mod envelope;
mod error;
mod fault;
mod fields;
mod reader;
mod writer;
mod wsdl;

#[cfg(test)]
mod tests;

pub use error::SoapError;
pub use fault::{parse_fault, write_fault, Fault, FaultCode};
pub use reader::{BodyReader, Element};
pub use writer::{
    element, end_element, envelope_end, envelope_start, start_element, start_element_ns,
    text_element,
};
pub use wsdl::{wsdl, WsdlSpec};

/// The SOAP 1.1 envelope namespace.
pub const SOAP11_ENV_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";

/// Documents nested deeper than this many elements are refused (the services need about 8).
pub const MAX_DEPTH: usize = 64;

/// `Content-Type` of SOAP 1.1 messages.
pub const CONTENT_TYPE: &str = "text/xml; charset=utf-8";
