//! HTTPS (rustls) and HTTP/2 (hyper's) against local servers: a self-signed certificate made by rcgen,
//! trusted with --cacert or skipped with --insecure, refused otherwise; HTTP/2 by ALPN over TLS and by
//! prior knowledge (h2c) over plain TCP, and h2c refused at once by a server that speaks only HTTP/1.1. The
//! server records which HTTP version each request came in.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, Version};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::support::{client, respond, run_bin, tmp, Counts, Server};

/// Requests seen, by HTTP version.
#[derive(Debug, Default)]
struct Versions {
    h1: AtomicU64,
    h2: AtomicU64,
}

impl Versions {
    fn get(&self) -> (u64, u64) {
        (
            self.h1.load(Ordering::SeqCst),
            self.h2.load(Ordering::SeqCst),
        )
    }
}

fn service(
    seen: Arc<Versions>,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Full<Bytes>>,
    Error = hyper::Error,
    Future = impl std::future::Future<Output = Result<Response<Full<Bytes>>, hyper::Error>>
                 + Send
                 + 'static,
> + Clone
       + Send
       + 'static {
    hyper::service::service_fn(move |req: Request<Incoming>| {
        let seen = seen.clone();
        async move {
            let counter = if req.version() == Version::HTTP_2 {
                &seen.h2
            } else {
                &seen.h1
            };
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::from_static(b"ok"))))
        }
    })
}

/// Serves HTTP/1.1 or HTTP/2 (by ALPN) over TLS, or HTTP/2 only over plain TCP when `tls` is `None`.
fn server(tls: Option<TlsAcceptor>, seen: Arc<Versions>) -> Server {
    Server::raw(move |stream| {
        let (tls, svc) = (tls.clone(), service(seen.clone()));
        async move {
            let Some(acceptor) = tls else {
                let io = TokioIo::new(stream);
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(io, svc)
                    .await;
                return;
            };
            let Ok(stream) = acceptor.accept(stream).await else {
                return; // the client refused the certificate
            };
            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            let io = TokioIo::new(stream);
            if h2 {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(io, svc)
                    .await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, svc)
                    .await;
            }
        }
    })
}

/// A self-signed certificate for `localhost`: the acceptor, and the certificate as a PEM file.
fn certificate() -> (TlsAcceptor, std::path::PathBuf) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("rcgen");
    let pem = tmp("cert.pem");
    std::fs::write(&pem, ck.cert.pem()).expect("write the PEM");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let chain = vec![CertificateDer::from(ck.cert.der().to_vec())];
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("a usable certificate");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (TlsAcceptor::from(Arc::new(config)), pem)
}

#[test]
fn https_with_a_trusted_certificate_or_insecure() {
    let (acceptor, pem) = certificate();
    let seen = Arc::new(Versions::default());
    let srv = server(Some(acceptor), seen.clone());
    let url = format!("https://localhost:{}/", srv.addr.port());
    let pem = pem.to_str().unwrap();
    let out = client(&[&url, "-c", "2", "-n", "20", "--cacert", pem]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors_total), (20, 0));
    assert_eq!(seen.get(), (20, 0), "HTTP/1.1 over TLS");
    let out = client(&[&url, "-n", "5", "-k"]);
    assert_eq!(out.doc.counts.ok, 5);
    assert!(out.doc.params.url.starts_with("https://"));
}

#[test]
fn https_with_an_untrusted_certificate_is_a_connect_error() {
    let (acceptor, _) = certificate();
    let srv = server(Some(acceptor), Arc::new(Versions::default()));
    let url = format!("https://localhost:{}/", srv.addr.port());
    let out = client(&[&url, "-n", "3"]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors.connect), (0, 3));
    assert!(
        out.first_errors[0].1.contains("certificate"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn http2_over_tls_by_alpn_and_over_tcp_by_prior_knowledge() {
    let (acceptor, pem) = certificate();
    let seen = Arc::new(Versions::default());
    let srv = server(Some(acceptor), seen.clone());
    let url = format!("https://localhost:{}/", srv.addr.port());
    let out = client(&[
        &url,
        "--http2",
        "-c",
        "2",
        "-n",
        "20",
        "--cacert",
        pem.to_str().unwrap(),
    ]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors_total), (20, 0));
    assert_eq!(seen.get(), (0, 20), "HTTP/2 over TLS");

    let seen = Arc::new(Versions::default());
    let h2c = server(None, seen.clone());
    let out = client(&[&h2c.url(), "--http2", "-c", "2", "-n", "20"]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors_total), (20, 0));
    assert_eq!(seen.get(), (0, 20), "h2c");
}

#[test]
fn http2_against_an_http1_only_server_fails_at_the_first_connection() {
    let stats = Counts::new();
    let h1 = Server::http(stats.clone(), |_, _| respond(StatusCode::OK, "ok"));
    let out = run_bin(&[&h1.url(), "--http2", "-c", "2", "-n", "10"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "failed to start: {stderr}");
    assert!(
        stderr.contains("the server did not answer HTTP/2 (prior knowledge, h2c)"),
        "{stderr}"
    );
    // The check's one connection, and no load: no summary of thousands of I/O errors.
    assert_eq!((stats.connections(), stats.requests()), (1, 0));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
