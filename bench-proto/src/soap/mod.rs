//! SOAP 1.1 envelopes: a namespace-correct pull reader, its cost bounded by [`Limits`], for request and response bodies, envelope
//! writing helpers, and faults.

mod attrs;
mod borrowed;
mod envelope;
mod error;
mod fault;
mod fields;
mod find;
mod limits;
mod ns;
mod reader;
mod recycle;
mod run;
mod scan;
mod unescape;
mod usual;
mod verbatim;
pub(crate) mod work;
mod writer;
mod wsdl;

#[cfg(test)]
mod tests;

pub use error::SoapError;
pub use fault::{parse_fault, write_fault, Fault, FaultCode};
pub use limits::{Limit, Limits};
pub(crate) use ns::colliding_prefixes;
pub use reader::{BodyReader, Element};
pub use run::UsualRun;
#[cfg(test)]
pub(crate) use work::last_spent;
pub(crate) use writer::{el, text_el};
pub use writer::{
    element, end_element, envelope_end, envelope_start, start_element, start_element_ns,
    text_element,
};
pub use wsdl::{wsdl, WsdlSpec};

/// The SOAP 1.1 envelope namespace.
pub(crate) const SOAP11_ENV_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";

/// `Content-Type` of SOAP 1.1 messages.
pub const CONTENT_TYPE: &str = "text/xml; charset=utf-8";
