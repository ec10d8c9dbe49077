//! The Customer service's requests (generated customers of `--message-size`) and their checks.

use bench_proto::customer::{self as proto, Customer, Request, Response};
use bytes::Bytes;
use http::StatusCode;

use super::mismatch::Mismatch;
use super::snippet::snippet;
use crate::operation::Operation;

/// Without --message-size the Customer operations use the T2000 seed's small messages.
pub(crate) const DEFAULT_MESSAGE_SIZE: u64 = 1024;
/// The generator's seed: the same bytes every run.
const SEED: u64 = 0x5EED_2006;

#[derive(Debug)]
pub(super) enum Expect {
    /// `add`: a summary counting what was sent.
    Add { count: u32 },
    /// `addAsync`: 202 and no body.
    AddAsync,
    /// `get`: exactly `count` customers.
    Get { count: u32 },
    /// `echo`: the very customers sent.
    Echo(Vec<Customer>),
}

/// The request body and what its response must be.
pub(super) fn request(op: Operation, message_size: Option<u64>) -> anyhow::Result<(Bytes, Expect)> {
    let size = message_size.unwrap_or(DEFAULT_MESSAGE_SIZE) as usize;
    let customers = proto::generate_for_size(size, SEED);
    anyhow::ensure!(
        !customers.is_empty(),
        "--message-size {size} holds no customer"
    );
    let count = customers.len() as u32;
    let (req, expect) = match op {
        Operation::Add => (Request::Add(customers), Expect::Add { count }),
        Operation::AddAsync => (Request::AddAsync(customers), Expect::AddAsync),
        // The response, not the request, is the large message of `get`.
        Operation::Get => (proto::get_request(count, 0), Expect::Get { count }),
        Operation::Echo => (Request::Echo(customers.clone()), Expect::Echo(customers)),
        other => unreachable!("{other} is not a Customer operation"),
    };
    let mut body = Vec::new();
    proto::write_request(&req, &mut body);
    Ok((Bytes::from(body), expect))
}

pub(super) fn validate(expected: &Expect, status: StatusCode, body: &[u8]) -> Result<(), Mismatch> {
    if let Expect::AddAsync = expected {
        return if status == StatusCode::ACCEPTED && body.is_empty() {
            Ok(())
        } else {
            Err(Mismatch::AddAsync {
                status,
                len: body.len(),
            })
        };
    }
    let got =
        proto::parse_response(body).map_err(|source| Mismatch::CustomerUnparseable { source })?;
    match (expected, &got) {
        (Expect::Add { count }, Response::Add(summary)) if summary.count == *count => Ok(()),
        (Expect::Add { count }, Response::Add(summary)) => Err(Mismatch::AddCount {
            counted: summary.count,
            sent: *count,
        }),
        (Expect::Get { count }, Response::Get(list)) if list.len() == *count as usize => Ok(()),
        (Expect::Get { count }, Response::Get(list)) => Err(Mismatch::GetCount {
            returned: list.len(),
            asked: *count,
        }),
        (Expect::Echo(sent), Response::Echo(list)) if list == sent => Ok(()),
        (Expect::Echo(sent), Response::Echo(list)) => {
            Err(match super::diff::first_difference(sent, list) {
                Some(d) => Mismatch::Field {
                    element: "echoResponse".to_owned(),
                    difference: format!("customer{d}"),
                },
                None => Mismatch::NotTheCustomers {
                    back: list.len(),
                    sent: sent.len(),
                    body: snippet(body),
                },
            })
        }
        _ => Err(Mismatch::WrongElement {
            body: snippet(body),
        }),
    }
}
