//! Judging a response: status, SOAP fault, a cheap envelope sniff on every response, and (for the sample
//! being validated) a full parse compared with what was sent.

use std::sync::OnceLock;

use bench_proto::operation::Operation;
use bench_proto::results::ErrorKind;
use bench_proto::soap::parse_fault;
use http::StatusCode;
use memchr::memmem::Finder;

use super::customer;
use super::snippet::snippet;
use super::variant::{Expect, Variant};

/// How far into a body the sniffs look: a fault or the envelope start is always near the top.
const SNIFF_BYTES: usize = 1024;

fn fault_finder() -> &'static Finder<'static> {
    static F: OnceLock<Finder<'static>> = OnceLock::new();
    F.get_or_init(|| Finder::new(b"Fault"))
}

fn envelope_finder() -> &'static Finder<'static> {
    static F: OnceLock<Finder<'static>> = OnceLock::new();
    F.get_or_init(|| Finder::new(b"Envelope"))
}

fn head(body: &[u8]) -> &[u8] {
    &body[..body.len().min(SNIFF_BYTES)]
}

/// `Ok(true)` if the call succeeded and was fully validated, `Ok(false)` if it succeeded on the cheap
/// checks alone, `Err(kind)` if it failed. `full` asks for the full parse and comparison.
pub fn check(
    op: Operation,
    v: &Variant,
    status: StatusCode,
    body: &[u8],
    full: bool,
) -> Result<bool, ErrorKind> {
    let soap = op.is_soap();
    if !status.is_success() {
        let fault =
            soap && fault_finder().find(head(body)).is_some() && parse_fault(body).is_some();
        return Err(if fault {
            ErrorKind::Fault
        } else {
            ErrorKind::HttpStatus
        });
    }
    if soap && !matches!(v.expect, Expect::Customer(customer::Expect::AddAsync)) {
        let h = head(body);
        if fault_finder().find(h).is_some() && parse_fault(body).is_some() {
            return Err(ErrorKind::Fault);
        }
        if envelope_finder().find(h).is_none() {
            return Err(ErrorKind::Validation);
        }
    }
    if !full {
        return Ok(false);
    }
    match v.validate(status, body) {
        Ok(()) => Ok(true),
        Err(_) => Err(ErrorKind::Validation),
    }
}

/// What was wrong with a failed call, for the summary's first-error sample (error path only).
pub fn describe(v: &Variant, kind: ErrorKind, status: StatusCode, body: &[u8]) -> String {
    match kind {
        ErrorKind::Fault => match parse_fault(body) {
            Some(f) => format!("HTTP {}: {f}", status.as_u16()),
            None => format!("HTTP {}: fault", status.as_u16()),
        },
        ErrorKind::HttpStatus => format!("HTTP {}: {}", status, snippet(body)),
        ErrorKind::Validation => match v.validate(status, body) {
            Err(why) => why,
            Ok(()) => format!("response is not a SOAP envelope: {}", snippet(body)),
        },
        _ => kind.as_str().to_owned(),
    }
}
