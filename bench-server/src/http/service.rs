//! Request routing: which path and method go where, plus the small non-SOAP endpoints (`/`, `/health`,
//! `/metrics`, the WSDLs). Every response passes through [`handle`], which counts it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bench_proto::{customer, cxf};
use http::header::{HeaderValue, ALLOW, HOST};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

use super::app::App;
use super::body::ResponseBody;
use super::reply::{text, with_type, TEXT_XML};
use super::soap::{self, Service};

const PROMETHEUS: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");

const INDEX: &str = "wsbench server\n\
POST /cxf-benchmark-soapdoclit/services/SoapHttpDocLitPort   CXF performance service (WSDL: ?wsdl)\n\
POST /services/CustomerService                               Customer service (WSDL: ?wsdl)\n\
GET  /health                                                 liveness\n\
GET  /metrics                                                Prometheus metrics\n";

/// hyper's service function: routes, then counts the response and the body bytes both ways.
pub(crate) async fn handle(
    app: Arc<App>,
    local: SocketAddr,
    req: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let (resp, body_in) = route(&app, local, req).await;
    app.metrics
        .response(resp.status().as_u16(), body_in, resp.body().len());
    Ok(resp)
}

/// The response and the number of request body bytes read.
async fn route(
    app: &App,
    local: SocketAddr,
    req: Request<Incoming>,
) -> (Response<ResponseBody>, usize) {
    let path = req.uri().path();
    let service = if path == cxf::PATH {
        Service::Cxf
    } else if path == customer::PATH {
        Service::Customer
    } else {
        let resp = match (path, req.method()) {
            ("/", &Method::GET) => text(StatusCode::OK, INDEX),
            ("/health", &Method::GET) => text(StatusCode::OK, "ok\n"),
            ("/metrics", &Method::GET) => with_type(
                StatusCode::OK,
                PROMETHEUS,
                app.metrics.render(app.store.len()).into(),
            ),
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
    fn wsdl_query_is_recognised() {
        assert!(wants_wsdl(Some("wsdl")));
        assert!(wants_wsdl(Some("WSDL")));
        assert!(wants_wsdl(Some("x=1&wsdl")));
        assert!(!wants_wsdl(Some("wsdl=1")));
        assert!(!wants_wsdl(None));
    }
}
