//! The CXF performance service's requests (CXF's own reference data) and the echo check.

use bench_proto::cxf::{self as proto, Request, Response};
use bytes::Bytes;

use super::mismatch::Mismatch;
use super::snippet::snippet;
use crate::operation::Operation;

/// A byte pattern for sized string and base64 echoes (printable ASCII, no markup characters).
const PATTERN: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The request body and the response it must get back.
pub(super) fn request(
    op: Operation,
    packet_size: u64,
    message_size: Option<u64>,
    id: i32,
) -> (Bytes, Response<'static>) {
    let sized = |n: u64| -> Vec<u8> { PATTERN.iter().copied().cycle().take(n as usize).collect() };
    let req = match (op, message_size) {
        (Operation::EchoComplexTypeDoc, _) => proto::echo_complex_request(packet_size as usize, id),
        (Operation::EchoStringDoc, Some(n)) => Request::EchoString(
            String::from_utf8(sized(n))
                .expect("the pattern is ASCII")
                .into(),
        ),
        (Operation::EchoStringDoc, None) => proto::echo_string_request(packet_size as usize),
        (Operation::EchoBase64Doc, Some(n)) => Request::EchoBase64(sized(n).into()),
        (Operation::EchoBase64Doc, None) => proto::echo_base64_request(),
        (other, _) => unreachable!("{other} is not a CXF operation"),
    };
    let mut body = Vec::new();
    proto::write_request(&req, &mut body);
    (Bytes::from(body), req.into_echo_response())
}

/// Parses `body` (its values borrowed, in this thread's scratch arena) and compares every field with `expected`.
pub(super) fn validate(expected: &Response<'static>, body: &[u8]) -> Result<(), Mismatch> {
    bench_proto::arena::with_scratch(|arena| {
        let got =
            proto::parse_response_in(body, arena).map_err(|source| Mismatch::CxfUnparseable {
                operation: expected.operation(),
                source,
            })?;
        compare(expected, &got, body)
    })
}

fn compare(expected: &Response<'_>, got: &Response<'_>, body: &[u8]) -> Result<(), Mismatch> {
    if got == expected {
        return Ok(());
    }
    Err(match (got, expected) {
        (Response::EchoComplex { id_out, .. }, Response::EchoComplex { id_out: want, .. })
            if id_out != want =>
        {
            Mismatch::IdOut {
                got: *id_out,
                want: *want,
            }
        }
        (Response::EchoComplex { items, .. }, Response::EchoComplex { items: want, .. })
            if items.len() != want.len() =>
        {
            Mismatch::Items {
                echoed: items.len(),
                sent: want.len(),
            }
        }
        _ => match super::diff::first_difference(expected, got) {
            Some(difference) => Mismatch::Field {
                element: format!("{}Response", expected.operation()),
                difference,
            },
            None => Mismatch::NotTheEcho {
                operation: expected.operation(),
                body: snippet(body),
            },
        },
    })
}
