//! Judging a response: every response passes the status and (SOAP) shape checks before it counts — a
//! whole envelope with the operation's response element in its namespace and as many items as were sent
//! (`bench_proto::check`) — and a sample is fully parsed and compared with what was sent.

use bench_proto::ossj::OrderFault;
use bench_proto::results::ErrorKind;
use bench_proto::soap::parse_fault;
use http::StatusCode;

use super::customer;
use super::snippet::snippet;
use super::variant::{Expect, Variant};

/// `Ok(true)` if the call succeeded and was fully validated, `Ok(false)` if it succeeded on the
/// per-response checks alone, `Err(kind)` if it failed. `full` asks for the full parse and comparison.
pub(super) fn check(
    v: &Variant,
    status: StatusCode,
    body: &[u8],
    full: bool,
) -> Result<bool, ErrorKind> {
    if !status.is_success() {
        let fault = match &v.expect {
            Expect::Ossj(_) => OrderFault::parse(body).is_some(),
            _ => v.shape.is_some() && parse_fault(body).is_some(),
        };
        return Err(if fault {
            ErrorKind::Fault
        } else {
            ErrorKind::HttpStatus
        });
    }
    if let Some(exact) = &v.exact {
        if body != &exact[..] || status != StatusCode::OK {
            return Err(ErrorKind::Validation);
        }
    }
    match (&v.shape, &v.expect) {
        (Some(shape), _) => {
            if shape.check(body).is_err() {
                // Error path only: a 2xx fault is still a fault.
                return Err(if parse_fault(body).is_some() {
                    ErrorKind::Fault
                } else {
                    ErrorKind::Validation
                });
            }
        }
        (None, Expect::Customer(customer::Expect::AddAsync)) => {
            if status != StatusCode::ACCEPTED || !body.is_empty() {
                return Err(ErrorKind::Validation);
            }
        }
        (None, Expect::Plain(Some(want))) => {
            if body != &want[..] {
                return Err(ErrorKind::Validation);
            }
        }
        (None, _) => {}
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
pub(super) fn describe(v: &Variant, kind: ErrorKind, status: StatusCode, body: &[u8]) -> String {
    match kind {
        ErrorKind::Fault => match (OrderFault::parse(body), parse_fault(body)) {
            (Some(f), _) => format!(
                "HTTP {}: {}: {}",
                status.as_u16(),
                f.kind.as_str(),
                f.detail
            ),
            (None, Some(f)) => format!("HTTP {}: {f}", status.as_u16()),
            (None, None) => format!("HTTP {}: fault", status.as_u16()),
        },
        ErrorKind::HttpStatus => format!("HTTP {}: {}", status, snippet(body)),
        ErrorKind::Validation => {
            if let Some(Err(e)) = v.shape.as_ref().map(|s| s.check(body)) {
                return format!("{e}: {}", snippet(body));
            }
            match v.validate(status, body) {
                Err(why) => why.to_string(),
                Ok(()) => format!("response not as expected: {}", snippet(body)),
            }
        }
        _ => kind.as_str().to_owned(),
    }
}
