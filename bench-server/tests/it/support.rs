//! Test harness: an in-process server on 127.0.0.1:0, a keep-alive HTTP/1.1 client (hyper's client
//! connection), and raw-socket helpers for the requests a well-behaved client would never send.

use std::net::SocketAddr;
use std::time::Duration;

use bench_server::http::HttpConfig;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Upper bound on any single wait in a test, so a broken server fails the test instead of hanging CI.
/// Never used to wait for something to happen; only to stop waiting for something that does not.
pub(crate) const BOUND: Duration = Duration::from_secs(20);

pub(crate) const SOAP_XML: &str = "text/xml; charset=utf-8";

/// Awaits `fut`, failing the test if it takes longer than [`BOUND`].
pub(crate) async fn bounded<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(BOUND, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no result within {BOUND:?}"))
}

/// A server running in this test's runtime.
pub(crate) struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl TestServer {
    pub(crate) async fn start() -> Self {
        Self::with(HttpConfig::default()).await
    }

    pub(crate) async fn with(config: HttpConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(bench_server::http::run(listener, config, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// A server some other `run` serves on `addr`, stopped through `stop`.
    pub(crate) fn from_parts(
        addr: SocketAddr,
        stop: oneshot::Sender<()>,
        task: JoinHandle<anyhow::Result<()>>,
    ) -> Self {
        Self {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// A fresh keep-alive client connection.
    pub(crate) async fn client(&self) -> Client {
        Client::connect(self.addr).await
    }

    /// The /metrics text, fetched on a fresh connection.
    pub(crate) async fn metrics(&self) -> String {
        let reply = self.client().await.get("/metrics").await;
        assert_eq!(reply.status, StatusCode::OK);
        reply.text()
    }

    /// Asks the server to stop, without waiting for it.
    pub(crate) fn request_stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// Asks the server to stop and checks that `run` returns Ok.
    pub(crate) async fn stop(mut self) {
        self.request_stop();
        let task = self.task.take().expect("running");
        bounded("server shutdown", task)
            .await
            .expect("server task")
            .expect("run returned an error");
    }
}

/// One sample of the Prometheus text, e.g. `metric(&text, "wsbench_http_connections_open")`; `name` may
/// include labels exactly as rendered.
pub(crate) fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("metric {name} missing from:\n{text}"))
        .parse()
        .expect("integer metric")
}

/// A response, fully read.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).expect("UTF-8 body")
    }

    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header"))
    }

    /// The SOAP fault in the body; fails the test unless this is a proper HTTP 500 fault response.
    pub(crate) fn fault(&self) -> bench_proto::soap::Fault {
        assert_eq!(
            self.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "body: {}",
            String::from_utf8_lossy(&self.body)
        );
        assert_eq!(self.header("content-type"), SOAP_XML);
        bench_proto::soap::parse_fault(&self.body)
            .unwrap_or_else(|| panic!("no fault in {}", self.text()))
    }
}

/// A keep-alive HTTP/1.1 client connection.
pub(crate) struct Client {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

impl Client {
    pub(crate) async fn connect(addr: SocketAddr) -> Self {
        let stream = bounded("connect", TcpStream::connect(addr))
            .await
            .expect("connect");
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        Self {
            sender,
            host: addr.to_string(),
        }
    }

    pub(crate) async fn send(&mut self, req: Request<Full<Bytes>>) -> Reply {
        bounded("response", async {
            self.sender.ready().await.expect("connection usable");
            let resp = self.sender.send_request(req).await.expect("response");
            let (parts, body) = resp.into_parts();
            let body = body.collect().await.expect("response body").to_bytes();
            Reply {
                status: parts.status,
                headers: parts.headers,
                body,
            }
        })
        .await
    }

    pub(crate) fn request(&self, method: Method, path: &str) -> http::request::Builder {
        Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, &self.host)
    }

    pub(crate) async fn get(&mut self, path: &str) -> Reply {
        let req = self
            .request(Method::GET, path)
            .body(Full::default())
            .expect("request");
        self.send(req).await
    }

    /// POSTs `body` as SOAP 1.1 (`text/xml; charset=utf-8`).
    pub(crate) async fn soap(&mut self, path: &str, body: Vec<u8>) -> Reply {
        self.post(path, Some(SOAP_XML), body).await
    }

    pub(crate) async fn post(
        &mut self,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Reply {
        let mut req = self.request(Method::POST, path);
        if let Some(ct) = content_type {
            req = req.header(CONTENT_TYPE, ct);
        }
        self.send(req.body(Full::new(Bytes::from(body))).expect("request"))
            .await
    }
}

/// Writes `request` on a new connection and reads until the server closes it.
pub(crate) async fn raw_exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = bounded("connect", TcpStream::connect(addr))
        .await
        .expect("connect");
    stream.write_all(request).await.expect("write request");
    read_to_close(&mut stream).await
}

/// Reads until the peer closes (EOF or reset); returns what arrived.
pub(crate) async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let _ = bounded("connection close", stream.read_to_end(&mut got)).await;
    String::from_utf8_lossy(&got).into_owned()
}

/// A SOAP 1.1 envelope around `body_xml`, with the `soap` prefix.
pub(crate) fn envelope(body_xml: &str) -> Vec<u8> {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>{body_xml}</soap:Body></soap:Envelope>"#
    )
    .into_bytes()
}
