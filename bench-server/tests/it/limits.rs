//! HTTP-level refusals and resource limits: 404/405/413/415, header and idle timeouts, the connection limit,
//! and that none of them stalls other connections.

use std::time::Duration;

use bench_proto::{customer, cxf};
use bench_server::http::HttpConfig;
use http::{Method, StatusCode};
use http_body_util::Full;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{bounded, envelope, metric, raw_exchange, read_to_close, Client, TestServer};

#[tokio::test]
async fn unknown_path_is_404() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    assert_eq!(c.get("/nope").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        c.soap("/services/Other", envelope("<x/>")).await.status,
        StatusCode::NOT_FOUND
    );
    server.stop().await;
}

#[tokio::test]
async fn wrong_method_is_405_with_allow() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    for path in [cxf::PATH, customer::PATH] {
        let r = c.get(path).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.header("allow"), "POST");
        let put = c.request(Method::PUT, path).body(Full::default()).unwrap();
        let r = c.send(put).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.header("allow"), "GET, POST");
    }
    for path in ["/health", "/metrics", "/"] {
        let r = c.post(path, Some("text/plain"), b"x".to_vec()).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{path}");
        assert_eq!(r.header("allow"), "GET");
    }
    server.stop().await;
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let body = envelope("<x/>");
    for ct in [
        Some("application/json"),
        Some("text/plain; charset=utf-8"),
        Some("text/xmlfoo"),
        None,
    ] {
        let r = c.post(cxf::PATH, ct, body.clone()).await;
        assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct:?}");
        assert!(r.text().contains("text/xml"), "the 415 says what to send");
    }
    let text = server.metrics().await;
    assert_eq!(
        metric(&text, "wsbench_http_responses_total{code=\"415\"}"),
        4
    );
    server.stop().await;
}

fn small_body_config() -> HttpConfig {
    HttpConfig {
        max_body: 1024,
        ..HttpConfig::default()
    }
}

#[tokio::test]
async fn body_over_the_limit_is_413_by_content_length() {
    let server = TestServer::with(small_body_config()).await;
    let mut c = server.client().await;
    let r = c.soap(cxf::PATH, vec![b' '; 1025]).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(r.header("connection"), "close");
    // Exactly at the limit the body is read and parsed (and, being blanks, refused as XML).
    let mut c = server.client().await;
    let r = c.soap(cxf::PATH, vec![b' '; 1024]).await;
    r.fault();
    server.stop().await;
}

#[tokio::test]
async fn chunked_body_is_refused_as_soon_as_it_passes_the_limit() {
    let server = TestServer::with(small_body_config()).await;
    // The body is never terminated: the 413 can only come from counting bytes as they stream in.
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n",
        cxf::PATH
    );
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..3 {
        stream
            .write_all(format!("200\r\n{}\r\n", " ".repeat(0x200)).as_bytes())
            .await
            .unwrap();
    }
    let reply = read_to_close(&mut stream).await;
    assert!(reply.starts_with("HTTP/1.1 413 "), "{reply}");
    server.stop().await;
}

#[tokio::test]
async fn slow_header_connection_is_closed_without_stalling_others() {
    let config = HttpConfig {
        header_timeout: Duration::from_millis(300),
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(b"POST /services/CustomerService HTTP/1.1\r\nHost: t\r\n")
        .await
        .unwrap();
    // While the slow client dawdles, others are served.
    let mut c = server.client().await;
    assert_eq!(c.get("/health").await.status, StatusCode::OK);
    let reply = read_to_close(&mut slow).await;
    assert!(
        !reply.contains(" 200 "),
        "the incomplete request must not be served: {reply}"
    );
    let text = server.metrics().await;
    assert!(metric(&text, "wsbench_http_connections_header_timeout_total") >= 1);
    server.stop().await;
}

/// The header timeout bounds a head, from its first byte, not the connection: one keep-alive connection
/// serving requests for longer than it, then sitting idle past it, stays open (idle is the idle timeout's).
#[tokio::test]
async fn header_timeout_bounds_a_head_not_the_connection() {
    let header_timeout = Duration::from_millis(200);
    let config = HttpConfig {
        header_timeout,
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut c = server.client().await;
    let busy_until = tokio::time::Instant::now() + 3 * header_timeout;
    while tokio::time::Instant::now() < busy_until {
        assert_eq!(c.get("/health").await.status, StatusCode::OK);
    }
    // Idle between requests for twice the header timeout: the behaviour under test, not a wait for
    // something else.
    tokio::time::sleep(2 * header_timeout).await;
    assert_eq!(c.get("/health").await.status, StatusCode::OK);
    let text = server.metrics().await;
    assert_eq!(
        metric(&text, "wsbench_http_connections_header_timeout_total"),
        0
    );
    server.stop().await;
}

#[tokio::test]
async fn stalled_body_is_closed_by_the_idle_timeout() {
    let config = HttpConfig {
        idle_timeout: Duration::from_millis(200),
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut stalled = TcpStream::connect(server.addr).await.unwrap();
    let head = format!("POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\nContent-Length: 100\r\n\r\n<soap:", cxf::PATH);
    stalled.write_all(head.as_bytes()).await.unwrap();
    let mut c = server.client().await;
    assert_eq!(c.get("/health").await.status, StatusCode::OK);
    let reply = read_to_close(&mut stalled).await;
    assert!(!reply.contains(" 200 "), "{reply}");
    let text = server.metrics().await;
    assert!(metric(&text, "wsbench_http_connections_idle_closed_total") >= 1);
    server.stop().await;
}

#[tokio::test]
async fn connection_limit_queues_extra_connections() {
    let config = HttpConfig {
        max_connections: 1,
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut first = server.client().await;
    assert_eq!(first.get("/health").await.status, StatusCode::OK);
    // A second connection is accepted by the kernel but not served while the first is open…
    let mut second = TcpStream::connect(server.addr).await.unwrap();
    second
        .write_all(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(300), second.read(&mut buf)).await;
    assert!(early.is_err(), "served beyond the connection limit");
    let text = String::from_utf8(first.get("/metrics").await.body.to_vec()).unwrap();
    assert_eq!(metric(&text, "wsbench_http_connections_open"), 1);
    // …and is served as soon as the first closes.
    drop(first);
    let reply = read_to_close(&mut second).await;
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    server.stop().await;
}

#[tokio::test]
async fn garbage_request_line_gets_400_and_server_keeps_serving() {
    let server = TestServer::start().await;
    let reply = raw_exchange(server.addr, b"\x00\x01 NONSENSE\r\n\r\n").await;
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 400 "),
        "{reply}"
    );
    let mut c = server.client().await;
    assert_eq!(c.get("/health").await.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn keep_alive_serves_many_requests_on_one_connection() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    for _ in 0..20 {
        assert_eq!(c.get("/health").await.status, StatusCode::OK);
    }
    let text = server.metrics().await;
    assert_eq!(metric(&text, "wsbench_http_connections_accepted_total"), 2);
    server.stop().await;
}

#[tokio::test]
async fn shutdown_finishes_with_idle_keep_alive_connections_open() {
    let server = TestServer::start().await;
    let mut c = Client::connect(server.addr).await;
    assert_eq!(c.get("/health").await.status, StatusCode::OK);
    // `c` stays open and idle; graceful shutdown must close it rather than wait for it.
    bounded("stop", server.stop()).await;
}

#[tokio::test]
async fn shutdown_lets_an_in_flight_request_finish_then_stops_accepting() {
    let mut server = TestServer::start().await;
    let addr = server.addr;
    let mut body = Vec::new();
    cxf::write_request(&cxf::Request::EchoString("in flight".into()), &mut body);
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        cxf::PATH,
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    // "100 Continue" arrives when the handler starts reading the body: the request is now in flight.
    let mut buf = vec![0u8; 25];
    bounded("100 Continue", stream.read_exact(&mut buf))
        .await
        .unwrap();
    assert!(
        buf.starts_with(b"HTTP/1.1 100 Continue\r\n\r\n"),
        "{}",
        String::from_utf8_lossy(&buf)
    );
    server.request_stop();
    stream.write_all(&body).await.unwrap();
    let reply = read_to_close(&mut stream).await;
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    assert!(reply.contains("in flight"), "{reply}");
    server.stop().await;
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "still accepting after shutdown"
    );
}
