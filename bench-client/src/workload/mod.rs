//! What each call sends and how its response is judged: request bodies generated once before the run
//! (deterministic, from bench-proto), the request head template, and response checks.
//!
//! The hot loop clones a `Bytes` body and a small header map, and checks every response before it counts
//! (status; for SOAP, bench-proto's shape check: envelope, response element in its namespace, item count);
//! a sample of responses is fully parsed and compared.

mod check;
mod customer;
mod cxf;
mod diff;
mod mismatch;
mod ossj;
mod snippet;
mod variant;

use anyhow::Context as _;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONNECTION, CONTENT_TYPE, HOST};
use http::{HeaderMap, Method, Request, Uri};
use http_body_util::Full;

use bench_proto::results::ErrorKind;
use http::StatusCode;

use crate::config::RunConfig;
use crate::operation::{Operation, Service};
use variant::Expect;

pub use mismatch::Mismatch;
pub use variant::Variant;

/// SOAP 1.1 clients send a `SOAPAction` header; the CXF and Customer bindings use an empty action.
const SOAP_ACTION: HeaderName = HeaderName::from_static("soapaction");

/// The prepared requests of a run and the knowledge to judge their responses.
#[derive(Debug)]
pub struct Workload {
    /// The run's operation (a mix's first).
    pub operation: Operation,
    method: Method,
    headers: HeaderMap,
    /// Per operation (one, or each of a mix's in its order): its request variants.
    ops: Vec<Vec<Variant>>,
}

/// Distinct CXF `id`s in flight, so that a response delivered to the wrong connection is caught.
const CXF_VARIANTS: u64 = 16;

/// The request variants of `op` (CXF: one `id` per connection, up to [`CXF_VARIANTS`]).
fn variants(cfg: &RunConfig, op: Operation) -> anyhow::Result<Vec<Variant>> {
    Ok(match op.service() {
        Service::Plain => vec![Variant::new(
            cfg.custom.body.clone().unwrap_or_default(),
            Expect::Plain(cfg.custom.expect_body.clone()),
        )],
        Service::Cxf => (0..cfg.clients.min(CXF_VARIANTS))
            .map(|id| {
                let (body, response) =
                    cxf::request(op, cfg.packet_size, cfg.message_size, id as i32);
                Variant::new(body, Expect::Cxf(response))
            })
            .collect(),
        Service::Customer => {
            let (body, expect) = customer::request(op, cfg.message_size)?;
            vec![Variant::new(body, Expect::Customer(expect))]
        }
        Service::Ossj => (0..ossj::VARIANTS)
            .map(|n| {
                let (body, reply) = ossj::request(n);
                Variant::new(body, Expect::Ossj(reply))
            })
            .collect(),
        Service::Chat => {
            anyhow::bail!("the chat load is `bench-client chat`, not a request load")
        }
    })
}

/// The request URI of `op`: origin-form for HTTP/1.1, absolute for HTTP/2 (`:authority`, `:path`).
fn uri_of(cfg: &RunConfig, op: Operation) -> anyhow::Result<Uri> {
    let path = cfg.path_of(op);
    if cfg.http2 {
        let scheme = if cfg.target.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let host = cfg.target.host.to_str().unwrap_or("?");
        format!("{scheme}://{host}{path}")
            .parse()
            .context("the request URL")
    } else {
        Ok(Uri::from(path))
    }
}

impl Workload {
    /// Generates every request body the run will send.
    pub fn build(cfg: &RunConfig) -> anyhow::Result<Workload> {
        let op = cfg.operation;
        let ops = cfg
            .operations()
            .into_iter()
            .map(|o| {
                let uri = uri_of(cfg, o)?;
                let mut vs = variants(cfg, o)?;
                for v in &mut vs {
                    v.operation = o;
                    v.uri = uri.clone();
                }
                Ok(vs)
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut headers = HeaderMap::new();
        // HTTP/2 carries the authority in the request's URI (`:authority`), and has no `Connection`.
        if !cfg.http2 {
            headers.insert(HOST, cfg.target.host.clone());
        }
        if op.is_soap() || op == Operation::OssjOrder {
            headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/xml; charset=utf-8"),
            );
            headers.insert(SOAP_ACTION, HeaderValue::from_static("\"\""));
        }
        if !cfg.keepalive && !cfg.http2 {
            headers.insert(CONNECTION, HeaderValue::from_static("close"));
        }
        for (name, value) in &cfg.custom.headers {
            headers.insert(name.clone(), value.clone());
        }
        let method = match &cfg.custom.method {
            Some(m) => m.clone(),
            None if op.is_soap() || op == Operation::OssjOrder || cfg.custom.body.is_some() => {
                Method::POST
            }
            None => Method::GET,
        };
        Ok(Workload {
            operation: op,
            method,
            headers,
            ops,
        })
    }

    /// How many operations the run draws from (1 without a mix).
    pub fn operations(&self) -> usize {
        self.ops.len()
    }

    /// Every prepared request, once, operation by operation.
    pub fn variants(&self) -> impl Iterator<Item = &Variant> {
        self.ops.iter().flatten()
    }

    /// The request connection `conn` sends (connections cycle through the variants).
    pub fn variant(&self, conn: u64) -> &Variant {
        self.variant_of(0, conn)
    }

    /// The request connection `conn` sends for operation `op` (an index in the mix's order).
    pub(crate) fn variant_of(&self, op: usize, conn: u64) -> &Variant {
        let vs = &self.ops[op];
        &vs[(conn % vs.len() as u64) as usize]
    }

    /// A request for `v`: cheap clones of the prepared head and body.
    pub fn request(&self, v: &Variant) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(v.body.clone()));
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = v.uri.clone();
        *req.headers_mut() = self.headers.clone();
        req
    }

    /// Judges a response (see `check::check`): `Ok(true)` fully validated, `Ok(false)` passed the cheap
    /// checks, `Err(kind)` failed.
    pub fn check(
        &self,
        v: &Variant,
        status: StatusCode,
        body: &[u8],
        full: bool,
    ) -> Result<bool, ErrorKind> {
        check::check(v, status, body, full)
    }

    /// The OSS/J portal's kind of a failed transaction, read from its fault answer (error path only).
    pub fn failure(&self, body: &[u8]) -> Option<bench_proto::ossj::Failure> {
        if self.operation != Operation::OssjOrder {
            return None;
        }
        ossj::fault(body).map(|f| f.kind)
    }

    /// What was wrong with a failed call (error path only).
    pub fn describe(
        &self,
        v: &Variant,
        kind: ErrorKind,
        status: StatusCode,
        body: &[u8],
    ) -> String {
        check::describe(v, kind, status, body)
    }
}
