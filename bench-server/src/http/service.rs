//! Request routing: which path and method go where, plus the small non-SOAP endpoints (`/`, `/health`,
//! `/metrics`, the WSDLs). Every response passes through [`handle`], which counts it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bench_proto::{customer, cxf, ossj};
use http::header::{HeaderMap, HeaderValue, ALLOW, CONNECTION, HOST, TRANSFER_ENCODING};
use http::{Method, Request, Response, StatusCode, Version};
use hyper::body::Incoming;

use super::app::App;
use super::body::ResponseBody;
use super::conn_io::ConnState;
use super::reply::{closing, text, with_type, TEXT_XML};
use super::soap::{self, Service};

const PROMETHEUS: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");

const INDEX: &str = "wsbench server\n\
POST /cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort   CXF performance service (WSDL: ?wsdl)\n\
POST /services/CustomerService                               Customer service (WSDL: ?wsdl)\n\
POST /oss/portal                                              OSS/J portal orders (--role app)\n\
GET  /health                                                 liveness\n\
GET  /metrics                                                Prometheus metrics\n";

/// hyper's service function: routes, then counts the response and the body bytes both ways.
pub(crate) async fn handle(
    app: Arc<App>,
    conn: Arc<ConnState>,
    local: SocketAddr,
    req: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let (resp, body_in) = if bad_host(req.headers(), req.version()) {
        let resp = text(
            StatusCode::BAD_REQUEST,
            "an HTTP/1.1 request needs exactly one Host header (RFC 9112 section 3.2)\n",
        );
        (closing(resp), 0)
    } else if unsupported_coding(req.headers()) {
        let resp = text(
            StatusCode::NOT_IMPLEMENTED,
            "unsupported transfer coding: this server implements only chunked\n",
        );
        (closing(resp), 0)
    } else {
        route(&app, local, req).await
    };
    // A closing answer may leave request bytes unsent by the client (an early 413, a 501): linger so it
    // reads the answer, not a reset. Not after a body timeout, whose slot must free at once. Only error
    // answers close, so a success skips the header lookup.
    let status = resp.status();
    if !status.is_success() && resp.headers().get(CONNECTION).is_some_and(|v| v == "close") {
        conn.closing();
        if status != StatusCode::REQUEST_TIMEOUT {
            conn.linger();
        }
    }
    app.metrics
        .response(resp.status().as_u16(), body_in, resp.body().len());
    conn.request_answered();
    Ok(resp)
}

/// RFC 9112 §3.2: a server answers 400 to an HTTP/1.1 request without Host and to any request with more
/// than one (HTTP/1.0 clients may omit it). One header lookup, once hyper has the head. The value is not
/// checked here (a per-byte check cost about 100 instructions a request, 1 % of /health): where it is
/// used, the WSDL's address, [`authority`] refuses what does not belong in a host.
fn bad_host(headers: &HeaderMap, version: Version) -> bool {
    let mut hosts = headers.get_all(HOST).iter();
    match hosts.next() {
        None => version == Version::HTTP_11,
        Some(_) => hosts.next().is_some(),
    }
}

/// A transfer coding other than `chunked` (RFC 9112 §6.1: a server that receives one it does not
/// understand answers 501). hyper itself only insists that `chunked` comes last.
fn unsupported_coding(headers: &HeaderMap) -> bool {
    headers.get_all(TRANSFER_ENCODING).iter().any(|v| {
        v.to_str().map_or(true, |v| {
            v.split(',')
                .map(str::trim)
                .any(|c| !c.is_empty() && !c.eq_ignore_ascii_case("chunked"))
        })
    })
}

/// The response and the number of request body bytes read.
async fn route(
    app: &Arc<App>,
    local: SocketAddr,
    req: Request<Incoming>,
) -> (Response<ResponseBody>, usize) {
    let path = req.uri().path();
    if path == ossj::PATH {
        return match (&app.portal, req.method()) {
            (Some(portal), &Method::POST) => super::portal::order(app, portal, req).await,
            (Some(_), _) => (method_not_allowed("POST"), 0),
            (None, _) => (
                text(
                    StatusCode::NOT_FOUND,
                    "this server is not an OSS/J application instance (bench-server --role app)\n",
                ),
                0,
            ),
        };
    }
    let service = if path == cxf::PATH {
        Service::Cxf
    } else if path == customer::PATH {
        Service::Customer
    } else {
        let resp = match (path, req.method()) {
            ("/", &Method::GET) => text(StatusCode::OK, INDEX),
            ("/health", &Method::GET) => text(StatusCode::OK, "ok\n"),
            ("/metrics", &Method::GET) => {
                with_type(StatusCode::OK, PROMETHEUS, app.render_metrics().into())
            }
            ("/" | "/health" | "/metrics", _) => method_not_allowed("GET"),
            _ => text(
                StatusCode::NOT_FOUND,
                "not found; see / for the endpoints\n",
            ),
        };
        return (resp, 0);
    };
    match *req.method() {
        Method::POST => soap::dispatch(app, service, req).await,
        Method::GET if wants_wsdl(req.uri().query()) => {
            let url = format!("http://{}{}", authority(&req, local), path);
            let wsdl = match service {
                Service::Cxf => cxf::wsdl(&url),
                Service::Customer => customer::wsdl(&url),
            };
            (with_type(StatusCode::OK, TEXT_XML, wsdl.into()), 0)
        }
        Method::GET => {
            let mut resp = method_not_allowed("POST");
            *resp.body_mut() = "POST SOAP 1.1 requests here; the WSDL is at ?wsdl\n".into();
            (resp, 0)
        }
        _ => (method_not_allowed("GET, POST"), 0),
    }
}

/// `?wsdl` (any case, possibly among other query parameters), as JAX-WS and CXF clients send it.
fn wants_wsdl(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|p| p.eq_ignore_ascii_case("wsdl")))
}

/// The authority the client used (Host header), so the WSDL's soap:address points back the way it came;
/// the listener's address if the header is absent or has characters that do not belong in a host.
fn authority(req: &Request<Incoming>, local: SocketAddr) -> String {
    let host = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')
                })
        });
    host.map_or_else(|| local.to_string(), str::to_owned)
}

fn method_not_allowed(allow: &'static str) -> Response<ResponseBody> {
    let mut resp = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_chunked_is_a_supported_transfer_coding() {
        let with = |values: &[&'static str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(TRANSFER_ENCODING, HeaderValue::from_static(v));
            }
            unsupported_coding(&h)
        };
        assert!(!with(&[]));
        assert!(!with(&["chunked"]));
        assert!(!with(&["Chunked"]));
        assert!(with(&["gzip, chunked"]));
        assert!(with(&["gzip", "chunked"]));
        assert!(with(&["identity"]));
    }

    #[test]
    fn host_must_be_single_and_present_in_http_1_1() {
        let with = |version, values: &[&'static str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(HOST, HeaderValue::from_static(v));
            }
            bad_host(&h, version)
        };
        let v11 = Version::HTTP_11;
        assert!(with(v11, &[]));
        assert!(!with(Version::HTTP_10, &[]));
        assert!(with(v11, &["a", "a"]));
        assert!(with(Version::HTTP_10, &["a", "b"]));
        assert!(!with(v11, &["127.0.0.1:8080"]));
        assert!(!with(Version::HTTP_10, &["t"]));
    }

    #[test]
    fn wsdl_query_is_recognised() {
        assert!(wants_wsdl(Some("wsdl")));
        assert!(wants_wsdl(Some("WSDL")));
        assert!(wants_wsdl(Some("x=1&wsdl")));
        assert!(!wants_wsdl(Some("wsdl=1")));
        assert!(!wants_wsdl(None));
    }
}
