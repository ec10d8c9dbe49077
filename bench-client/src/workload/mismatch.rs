//! What the full check found wrong with an answer: a kind with its data (error path only), put into words
//! only where a verdict of `--verify-only` or the summary's first-error sample shows it.

use bench_proto::cxf::Operation;
use bench_proto::ossj::OrderError;
use bench_proto::soap::SoapError;
use http::StatusCode;
use thiserror::Error;

/// Why an answer is not the one its request asked for. Bodies are held as printable excerpts (`snippet`).
#[derive(Debug, Error)]
pub enum Mismatch {
    /// `--expect-body` was given and the body is another.
    #[error("the body is not --expect-body's {want} ({want_len} bytes): {got} ({got_len} bytes)")]
    Body {
        want: String,
        want_len: usize,
        got: String,
        got_len: usize,
    },
    /// A CXF answer that does not parse.
    #[error("unparseable {operation} response: {source}")]
    CxfUnparseable {
        operation: Operation,
        source: SoapError,
    },
    /// A Customer answer that does not parse.
    #[error("unparseable response: {source}")]
    CustomerUnparseable { source: SoapError },
    /// An OSS/J answer that is not an order reply.
    #[error("the answer is not an order reply ({source}): {body}")]
    NotAnOrderReply { source: OrderError, body: String },
    /// `echoComplexTypeDoc`'s `idout` is not the request's `id`.
    #[error("idout {got} != id {want}")]
    IdOut { got: i32, want: i32 },
    /// `echoComplexTypeDoc` echoed another number of items.
    #[error("{echoed} items echoed, {sent} sent")]
    Items { echoed: usize, sent: usize },
    /// The first field that differs, under the response element that holds it.
    #[error("{element}: {difference}")]
    Field { element: String, difference: String },
    /// A CXF answer that differs from the request, though no field prints differently.
    #[error("{operation} response differs from the request: {body}")]
    NotTheEcho { operation: Operation, body: String },
    /// A Customer `echo` that differs from the request, though no field prints differently.
    #[error("echo differs from the request ({back} customers back, {sent} sent): {body}")]
    NotTheCustomers {
        back: usize,
        sent: usize,
        body: String,
    },
    /// `addAsync` must be answered 202 with no body.
    #[error("addAsync answered HTTP {status} with {len} bytes, not 202 and no body")]
    AddAsync { status: StatusCode, len: usize },
    /// `add`'s summary counts another number of customers.
    #[error("add summary counts {counted} customers, {sent} sent")]
    AddCount { counted: u32, sent: u32 },
    /// `get` returned another number of customers.
    #[error("get returned {returned} customers, {asked} asked")]
    GetCount { returned: usize, asked: u32 },
    /// The answer's element is not the request's.
    #[error("wrong response element: {body}")]
    WrongElement { body: String },
    /// An OSS/J reply whose fields are right but whose bytes are not what a back end writes.
    #[error("the reply is not written as a back end writes it: {body}")]
    NotAsWritten { body: String },
}
