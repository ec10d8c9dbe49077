//! The Apache CXF performance sample's document/literal `DocPortType` (service `PerfService`, port
//! `SoapHttpDocLitPort`), wire-compatible with CXF's own client and server: typed messages, their codec,
//! the reference data the CXF client sends, and the WSDL.

mod message;
mod parse;
mod reference;
mod types;
mod write;
mod wsdl;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod usual_tests;
#[cfg(test)]
mod work_tests;

pub use message::{Operation, Request, Response};
pub use parse::{
    parse_request, parse_request_in, parse_request_with, parse_response, parse_response_in,
};
pub use reference::{
    echo_base64_request, echo_complex_request, echo_string_request, reference_item,
};
pub use types::{ColourEnum, Items, NestedComplexType, SimpleStruct};
pub use write::{write_request, write_response};
pub use wsdl::wsdl;

/// Where the CXF sample deploys the service (and where its client posts).
pub const PATH: &str = "/cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort";
/// Namespace of the message elements and types (`elementFormDefault="qualified"`).
pub const TYPES_NS: &str = "http://cxf.apache.org/cxf/performance/types";
/// Namespace of the WSDL definitions (service, port type, binding).
pub(crate) const SERVICE_NS: &str = "http://cxf.apache.org/cxf/performance";
