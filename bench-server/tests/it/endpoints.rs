//! The non-SOAP endpoints and the WSDLs: `/`, `/health`, `/metrics`, `?wsdl`.

use bench_proto::{customer, cxf};
use http::StatusCode;

use crate::support::{metric, TestServer};

#[tokio::test]
async fn index_names_the_endpoints() {
    let server = TestServer::start().await;
    let r = server.client().await.get("/").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.header("content-type").starts_with("text/plain"));
    let text = r.text();
    for path in [cxf::PATH, customer::PATH, "/health", "/metrics"] {
        assert!(text.contains(path), "{path} missing from {text}");
    }
    server.stop().await;
}

#[tokio::test]
async fn health_is_ok() {
    let server = TestServer::start().await;
    let r = server.client().await.get("/health").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.text(), "ok\n");
    server.stop().await;
}

#[tokio::test]
async fn wsdls_point_back_at_the_server() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let host = server.addr.to_string();
    for (path, expected) in [
        (cxf::PATH, cxf::wsdl(&format!("http://{host}{}", cxf::PATH))),
        (
            customer::PATH,
            customer::wsdl(&format!("http://{host}{}", customer::PATH)),
        ),
    ] {
        for query in ["wsdl", "WSDL"] {
            let r = c.get(&format!("{path}?{query}")).await;
            assert_eq!(r.status, StatusCode::OK);
            assert_eq!(r.header("content-type"), "text/xml; charset=utf-8");
            assert_eq!(r.text(), expected);
        }
    }
    server.stop().await;
}

/// The peer servers (peers/) are built from copies of these WSDLs, so that they build without Rust and serve
/// what bench-server serves; `WSBENCH_BLESS=1` rewrites the copies after a change of the services.
#[test]
fn peer_servers_are_built_from_these_wsdls() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/wsdl");
    // The JAX-WS convention for "the address this is served at": the peers put theirs there.
    let url = "REPLACE_WITH_ACTUAL_URL";
    for (file, wsdl) in [
        ("cxf.wsdl", cxf::wsdl(url)),
        ("customer.wsdl", customer::wsdl(url)),
    ] {
        let path = dir.join(file);
        if std::env::var_os("WSBENCH_BLESS").is_some() {
            std::fs::write(&path, &wsdl).unwrap();
        }
        let copy = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            copy == wsdl,
            "{} differs from what bench-server serves; rewrite it with \
             `WSBENCH_BLESS=1 cargo test -p bench-server --test it peer_servers` and rebuild the peers",
            path.display()
        );
    }
}

#[tokio::test]
async fn metrics_count_requests_bytes_and_connections() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let req = cxf::Request::EchoString("metrics".into());
    let mut body = Vec::new();
    cxf::write_request(&req, &mut body);
    let sent = body.len() as u64;
    let reply = c.soap(cxf::PATH, body).await;
    assert_eq!(reply.status, StatusCode::OK);
    let reply_len = reply.body.len() as u64;

    let r = c.get("/metrics").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r
        .header("content-type")
        .starts_with("text/plain; version=0.0.4"));
    let text = r.text();
    assert_eq!(
        metric(
            &text,
            r#"wsbench_soap_requests_total{service="cxf",operation="echoStringDoc"}"#
        ),
        1
    );
    assert_eq!(
        metric(
            &text,
            r#"wsbench_soap_faults_total{service="cxf",operation="echoStringDoc"}"#
        ),
        0
    );
    assert_eq!(
        metric(
            &text,
            r#"wsbench_soap_requests_total{service="customer",operation="get"}"#
        ),
        0
    );
    assert_eq!(metric(&text, "wsbench_http_received_bytes_total"), sent);
    assert_eq!(metric(&text, "wsbench_http_sent_bytes_total"), reply_len);
    assert_eq!(metric(&text, "wsbench_http_connections_open"), 1);
    assert_eq!(
        metric(&text, r#"wsbench_http_responses_total{code="200"}"#),
        1
    );
    assert_eq!(
        metric(&text, "wsbench_customer_store_size"),
        bench_server::http::HttpConfig::DEFAULT_STORE_PREFILL as u64
    );
    // Every sample line is `name{labels} integer` and every metric has HELP and TYPE.
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let name = rest.split(' ').next().unwrap();
            assert!(
                text.contains(&format!("# HELP {name} ")),
                "{name} has no HELP"
            );
        } else if !line.starts_with('#') {
            let (_, v) = line.rsplit_once(' ').unwrap();
            v.parse::<u64>()
                .unwrap_or_else(|_| panic!("bad sample {line}"));
        }
    }
    drop(c);
    server.stop().await;
}
