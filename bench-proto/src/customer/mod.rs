//! The Customer service (after the XFire Customer benchmark): CRM-like customer records added, fetched and
//! echoed in arrays, their codec, a deterministic generator of arrays of a target XML size, and the WSDL.

mod echo;
mod generate;
mod message;
mod parse;
mod types;
mod write;
mod wsdl;

#[cfg(test)]
mod tests;

pub use echo::{serve_request, Served};
pub use generate::{generate, generate_for_size};
pub use message::{get_request, AddSummary, Operation, Request, Response};
pub use parse::{parse_request, parse_request_with, parse_response};
pub use types::{Address, Customer};
pub use write::{write_customer, write_request, write_response};
pub use wsdl::wsdl;

/// Where the service is served.
pub const PATH: &str = "/services/CustomerService";
/// Namespace of the service's elements (qualified) and WSDL definitions.
pub const NS: &str = "http://wsbench.dev/customer";
