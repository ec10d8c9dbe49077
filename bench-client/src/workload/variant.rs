//! One prepared request body and what its response must be, with the full (sampled) check.

use bench_proto::check::Shape;
use bytes::Bytes;
use http::{StatusCode, Uri};

use crate::operation::Operation;

use super::mismatch::Mismatch;
use super::snippet::snippet;
use super::{customer, cxf, ossj};

/// One prepared request body and what its response must be.
#[derive(Debug)]
pub struct Variant {
    /// The operation it calls.
    pub operation: Operation,
    /// Where it is sent (origin-form; absolute for HTTP/2).
    pub uri: Uri,
    pub body: Bytes,
    pub(super) expect: Expect,
    /// The cheap check every SOAP response passes before it counts (`None`: no envelope expected).
    pub(super) shape: Option<Shape>,
    /// `ossj-order`: the bytes every answer must be.
    pub(super) exact: Option<Bytes>,
}

/// What a fully validated response must contain.
#[derive(Debug)]
pub(super) enum Expect {
    /// `http-get`: any 2xx body, or exactly this one (`--expect-body`, compared on every response).
    Plain(Option<Bytes>),
    /// Owned: the workload keeps it for the whole run.
    Cxf(bench_proto::cxf::Response<'static>),
    Customer(customer::Expect),
    /// `ossj-order`: this reply, byte for byte, on every answer.
    Ossj(bench_proto::ossj::OrderReply),
}

impl Variant {
    pub(super) fn new(body: Bytes, expect: Expect) -> Variant {
        let shape = expect.shape();
        let exact = match &expect {
            Expect::Ossj(reply) => Some(Bytes::from(ossj::exact(reply))),
            _ => None,
        };
        Variant {
            operation: Operation::HttpGet,
            uri: Uri::from_static("/"),
            body,
            expect,
            shape,
            exact,
        }
    }

    /// The full check: parse the response and compare it with what the request asked for.
    pub fn validate(&self, status: StatusCode, body: &[u8]) -> Result<(), Mismatch> {
        match &self.expect {
            Expect::Plain(None) => Ok(()),
            Expect::Plain(Some(want)) if body == &want[..] => Ok(()),
            Expect::Plain(Some(want)) => Err(Mismatch::Body {
                want: snippet(want),
                want_len: want.len(),
                got: snippet(body),
                got_len: body.len(),
            }),
            Expect::Cxf(expected) => cxf::validate(expected, body),
            Expect::Customer(expected) => customer::validate(expected, status, body),
            Expect::Ossj(expected) => ossj::validate(expected, body),
        }
    }
}

impl Expect {
    /// The response's envelope, element and item count, checked on every response.
    fn shape(&self) -> Option<Shape> {
        use bench_proto::cxf::Response;
        use bench_proto::{customer::NS, cxf::TYPES_NS};
        match self {
            Expect::Plain(_) | Expect::Customer(customer::Expect::AddAsync) | Expect::Ossj(_) => {
                None
            }
            Expect::Cxf(r @ Response::EchoComplex { items, .. }) => Some(
                Shape::new(TYPES_NS, r.operation().response_element())
                    .with_items(Some("return"), "item", items.len())
                    .with_exact(canonical(|out| bench_proto::cxf::write_response(r, out))),
            ),
            Expect::Cxf(r) => Some(
                Shape::new(TYPES_NS, r.operation().response_element())
                    .with_exact(canonical(|out| bench_proto::cxf::write_response(r, out))),
            ),
            Expect::Customer(customer::Expect::Add { .. }) => Some(Shape::new(NS, "addResponse")),
            Expect::Customer(customer::Expect::Get { count }) => {
                Some(Shape::new(NS, "getResponse").with_items(None, "customer", *count as usize))
            }
            Expect::Customer(customer::Expect::Echo(sent)) => Some(
                Shape::new(NS, "echoResponse")
                    .with_items(None, "customer", sent.len())
                    .with_exact(canonical(|out| {
                        bench_proto::customer::write_response(
                            &bench_proto::customer::Response::Echo(sent.clone()),
                            out,
                        )
                    })),
            ),
        }
    }
}

/// The bytes a canonical writer makes.
fn canonical(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out);
    out
}
