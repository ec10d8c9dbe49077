//! SOAP dispatch: checks the content type and body size, parses the envelope into typed values with
//! bench-proto, performs the operation and serialises the typed response (or a SOAP 1.1 Client fault).

use bench_proto::soap::{Fault, FaultCode, Limits, SoapError};
use bench_proto::{customer, cxf, soap as proto_soap};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, Request, Response, StatusCode};
use hyper::body::{Body as _, Incoming};

use std::sync::Arc;

use super::app::App;
use super::body::{read_limited, ReadBody, ReadBodyError, ResponseBody};
use super::budget::Charge;
use super::metrics::SoapOp;
use super::pool::PooledBuf;
use super::reply::{closing, text, with_type, TEXT_XML};
use super::store::GetCursor;
use super::stream::{write_get_head, write_get_tail, GetStream, CHUNK_SLACK, FIRST_CHUNK};

/// Which SOAP service a request is for (from its path).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Service {
    Cxf,
    Customer,
}

/// Handles a POST to a service path; returns the response and the request body bytes read.
pub(crate) async fn dispatch(
    app: &Arc<App>,
    service: Service,
    req: Request<Incoming>,
) -> (Response<ResponseBody>, usize) {
    if !is_xml(req.headers()) {
        let resp = text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "SOAP 1.1 requests need Content-Type: text/xml (charset utf-8)\n",
        );
        return (resp, 0);
    }
    let body = match read_body(app, req).await {
        Ok(body) => body,
        Err(resp) => return resp,
    };
    let body_in = body.bytes.len();
    // Responses are built only while the response budget has room (peers not reading hold it).
    if !app.response_budget.has_room() {
        app.response_budget.room().await;
    }
    let limits = app.config.xml_limits;
    let big = body_in >= OFFLOAD_BYTES;
    // Off the worker, building awaits: hold an estimate (an echo is about as big as its request) meanwhile,
    // so that work admitted after this sees the budget taken, as it would inline.
    let provisional = big.then(|| app.response_budget.charge(body_in));
    let (op, outcome, out) = match service {
        Service::Cxf => {
            offload(big, move || {
                let mut out = PooledBuf::take();
                let (op, outcome) = cxf_call(&body.bytes, &limits, &mut out);
                drop(body);
                (op, outcome, out)
            })
            .await
        }
        Service::Customer => {
            // An echo is answered as it is parsed (one pass); the other operations come back parsed.
            let (served, out) = offload(big, move || {
                let mut out = PooledBuf::take();
                let served = customer::serve_request(&body.bytes, &limits, &mut out);
                drop(body);
                (served, out)
            })
            .await;
            customer_call(app, served, out)
        }
    };
    app.metrics.soap_request(op);
    let charge = app.response_budget.charge(out.len());
    drop(provisional);
    (respond(app, op, outcome, out, charge), body_in)
}

/// Reads the body of a SOAP request within the size limit, the request budget and the body timeout; the
/// error response (and the body bytes it counts as read) otherwise.
async fn read_body(
    app: &Arc<App>,
    req: Request<Incoming>,
) -> Result<ReadBody, (Response<ResponseBody>, usize)> {
    let limit = app.config.max_body;
    let declared = req.body().size_hint().exact();
    if declared.is_some_and(|n| n > limit as u64) {
        return Err((too_large(), 0));
    }
    // While peers that do not read hold the response budget, leave new bodies in the kernel (backpressure)
    // rather than read what cannot be answered yet; checked again before building. (Checked here first: the
    // await of `room` costs more than the check when, as nearly always, there is room.)
    if !app.response_budget.has_room() {
        app.response_budget.room().await;
    }
    let (budget, timeout) = (&app.request_budget, app.config.body_timeout);
    match read_limited(req.into_body(), declared, limit, budget, timeout).await {
        Ok(body) => Ok(body),
        Err(ReadBodyError::TooLarge { .. }) => Err((too_large(), limit)),
        Err(ReadBodyError::Timeout(_)) => {
            let resp = text(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive within the body timeout\n",
            );
            Err((closing(resp), 0))
        }
        Err(ReadBodyError::Busy(_)) => {
            let resp = text(
                StatusCode::SERVICE_UNAVAILABLE,
                "no memory for the request body in time (request budget spent); retry later\n",
            );
            Err((closing(resp), 0))
        }
        Err(e @ ReadBodyError::Io(_)) => {
            tracing::debug!("{e}");
            Err((
                closing(text(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read\n",
                )),
                0,
            ))
        }
    }
}

/// The HTTP response for a call's outcome, its body `out` (charged to the response budget by `charge`).
fn respond(
    app: &Arc<App>,
    op: SoapOp,
    outcome: Outcome,
    out: PooledBuf,
    charge: Charge,
) -> Response<ResponseBody> {
    match outcome {
        Outcome::Ok => with_type(StatusCode::OK, TEXT_XML, ResponseBody::pooled(out, charge)),
        Outcome::Streamed(cursor) => {
            let rest = GetStream::new(app.clone(), cursor, out, charge);
            with_type(
                StatusCode::OK,
                TEXT_XML,
                ResponseBody::Stream(Box::new(rest)),
            )
        }
        Outcome::Accepted => {
            let mut resp = Response::new(ResponseBody::empty());
            *resp.status_mut() = StatusCode::ACCEPTED;
            resp
        }
        Outcome::Fault => {
            app.metrics.soap_fault(op);
            with_type(
                StatusCode::INTERNAL_SERVER_ERROR,
                TEXT_XML,
                ResponseBody::pooled(out, charge),
            )
        }
    }
}

/// Bodies at least this big are parsed (and their responses written) on tokio's blocking pool rather than on
/// the worker that serves other connections too: an 8 MiB customer array costs 0.2–1 s, which would otherwise
/// delay every call queued behind it on that worker (measured: the p99 of small calls beside two clients
/// echoing 7 MB went from 406 ms to 3.6 ms with one worker). Smaller ones (the 100 KB workload: ~3 ms) stay on
/// the worker, where they cost no thread hand-off.
const OFFLOAD_BYTES: usize = 512 * 1024;

/// Runs `work` here, or on the blocking pool when `big`.
async fn offload<T: Send + 'static>(big: bool, work: impl FnOnce() -> T + Send + 'static) -> T {
    if !big {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        // Blocking tasks are never cancelled once started; a panic in one is a bug to surface, as inline.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// What a call produced in `out`.
enum Outcome {
    /// A response envelope (HTTP 200).
    Ok,
    /// The start of a `get` response; the rest streams from the store (HTTP 200).
    Streamed(GetCursor),
    /// Nothing: a one-way operation (HTTP 202, empty body).
    Accepted,
    /// A fault envelope (HTTP 500).
    Fault,
}

fn cxf_call(body: &[u8], limits: &Limits, out: &mut Vec<u8>) -> (SoapOp, Outcome) {
    match super::cxf_echo(body, limits, out) {
        Some(cxf::Operation::EchoStringDoc) => (SoapOp::CxfEchoString, Outcome::Ok),
        Some(cxf::Operation::EchoBase64Doc) => (SoapOp::CxfEchoBase64, Outcome::Ok),
        Some(cxf::Operation::EchoComplexTypeDoc) => (SoapOp::CxfEchoComplex, Outcome::Ok),
        None => (SoapOp::CxfUnknown, Outcome::Fault),
    }
}

fn customer_call(
    app: &App,
    served: Result<customer::Served, SoapError>,
    mut out: PooledBuf,
) -> (SoapOp, Outcome, PooledBuf) {
    let req = match served {
        Ok(customer::Served::Echoed { .. }) => return (SoapOp::CustomerEcho, Outcome::Ok, out),
        Ok(customer::Served::Request(req)) => req,
        Err(e) => {
            proto_soap::write_fault(&mut out, &e.fault());
            return (SoapOp::CustomerUnknown, Outcome::Fault, out);
        }
    };
    match req {
        customer::Request::Add(customers) => {
            let summary = app.store.add(customers);
            customer::write_response(&customer::Response::Add(summary), &mut out);
            (SoapOp::CustomerAdd, Outcome::Ok, out)
        }
        customer::Request::AddAsync(customers) => {
            app.store.add(customers);
            (SoapOp::CustomerAddAsync, Outcome::Accepted, out)
        }
        customer::Request::Get { count, offset } => {
            let max = app.config.max_get;
            if count > max {
                let fault = Fault {
                    code: FaultCode::Client,
                    string: format!(
                        "get: count {count} is more than this server returns at once ({max})"
                    ),
                    detail: None,
                };
                proto_soap::write_fault(&mut out, &fault);
                return (SoapOp::CustomerGet, Outcome::Fault, out);
            }
            let mut cursor = app.store.get_cursor(count, offset);
            // About 600 bytes a customer: reserve once for what this get will write into `out`.
            out.reserve((count as usize).saturating_mul(600).min(FIRST_CHUNK) + CHUNK_SLACK);
            write_get_head(&mut out);
            if app.store.write_get(&mut cursor, &mut out, FIRST_CHUNK) {
                write_get_tail(&mut out);
                (SoapOp::CustomerGet, Outcome::Ok, out)
            } else {
                (SoapOp::CustomerGet, Outcome::Streamed(cursor), out)
            }
        }
        // `serve_request` answers every echo itself.
        customer::Request::Echo(customers) => {
            customer::write_response(&customer::Response::Echo(customers), &mut out);
            (SoapOp::CustomerEcho, Outcome::Ok, out)
        }
    }
}

fn too_large() -> Response<ResponseBody> {
    closing(text(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request body too large\n",
    ))
}

/// SOAP 1.1 uses `text/xml`; `application/soap+xml` (SOAP 1.2) is let through so the envelope check can
/// answer it with a proper VersionMismatch fault. Parameters (charset…) are accepted as sent.
fn is_xml(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    // On bytes: `split` and `trim` on the str cost more than the rest of the check.
    let value = value.as_bytes();
    let media = value
        .iter()
        .position(|&b| b == b';')
        .map_or(value, |end| &value[..end])
        .trim_ascii();
    media.eq_ignore_ascii_case(b"text/xml") || media.eq_ignore_ascii_case(b"application/soap+xml")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(ct: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static(ct));
        h
    }

    #[test]
    fn content_types() {
        assert!(is_xml(&headers("text/xml")));
        assert!(is_xml(&headers("text/xml; charset=utf-8")));
        assert!(is_xml(&headers("TEXT/XML;charset=\"UTF-8\"")));
        assert!(is_xml(&headers(
            "application/soap+xml; charset=utf-8; action=\"x\""
        )));
        assert!(!is_xml(&headers("application/json")));
        assert!(!is_xml(&headers("text/xmlx")));
        assert!(!is_xml(&HeaderMap::new()));
    }
}
