//! One prepared request body and what its response must be, with the full (sampled) check.

use bytes::Bytes;
use http::StatusCode;

use super::{customer, cxf};

/// One prepared request body and what its response must be.
#[derive(Debug)]
pub struct Variant {
    pub body: Bytes,
    pub(super) expect: Expect,
}

/// What a fully validated response must contain.
#[derive(Debug)]
pub(super) enum Expect {
    /// `http-get`: any 2xx body.
    Plain,
    Cxf(bench_proto::cxf::Response),
    Customer(customer::Expect),
}

impl Variant {
    /// The full check: parse the response and compare it with what the request asked for.
    pub fn validate(&self, status: StatusCode, body: &[u8]) -> Result<(), String> {
        match &self.expect {
            Expect::Plain => Ok(()),
            Expect::Cxf(expected) => cxf::validate(expected, body),
            Expect::Customer(expected) => customer::validate(expected, status, body),
        }
    }
}
