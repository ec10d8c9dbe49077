//! Resting connections (`rest_above`): a connection whose hyper session ends after each answer is still
//! answered correctly, sequential and pipelined, is still bounded by the idle and header timeouts, and does
//! not hold up shutdown.

use std::time::Duration;

use bench_proto::customer::{self, Request, Response};
use bench_server::http::HttpConfig;
use http::StatusCode;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{bounded, metric, read_to_close, TestServer};

const HEALTH: &[u8] = b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n";
const HEALTH_REPLY_END: &str = "\r\n\r\nok\n";

fn resting(rest_above: usize) -> HttpConfig {
    HttpConfig {
        rest_above,
        ..HttpConfig::default()
    }
}

async fn rests(server: &TestServer) -> u64 {
    metric(
        &server.metrics().await,
        "wsbench_http_connection_rests_total",
    )
}

/// Reads from `stream` until `n` answers to `/health` have arrived in full.
async fn read_health_replies(stream: &mut TcpStream, n: usize) -> String {
    let mut got = Vec::new();
    bounded("pipelined replies", async {
        while String::from_utf8_lossy(&got)
            .matches(HEALTH_REPLY_END)
            .count()
            < n
        {
            let mut buf = [0u8; 4096];
            let k = stream.read(&mut buf).await.expect("read");
            assert!(k > 0, "closed after {}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..k]);
        }
    })
    .await;
    String::from_utf8(got).expect("utf-8")
}

#[tokio::test]
async fn sequential_requests_on_a_resting_connection_are_answered() {
    let server = TestServer::with(resting(0)).await;
    let mut c = server.client().await;
    for i in 0..20 {
        // Small echoes, and a 100 KB one whose answer takes several writes.
        let size = if i == 10 { 100_000 } else { 1_000 };
        let customers = customer::generate_for_size(size, i);
        let req = Request::Echo(customers.clone());
        let mut body = Vec::new();
        customer::write_request(&req, &mut body);
        let reply = c.soap(customer::PATH, body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(
            customer::parse_response(&reply.body).expect("an echo"),
            Response::Echo(customers)
        );
        assert_eq!(c.get("/health").await.text(), "ok\n");
    }
    // Each answer but the last ended a session (the metrics request's own connection rests too).
    assert!(rests(&server).await >= 39);
    assert_eq!(
        metric(
            &server.metrics().await,
            "wsbench_http_connections_accepted_total"
        ),
        3,
        "one connection for the calls, one per metrics request"
    );
    server.stop().await;
}

#[tokio::test]
async fn pipelined_requests_across_rests_are_answered_in_order() {
    let server = TestServer::with(resting(0)).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    // Five whole requests, then half of a sixth: what one session read of the next goes to the next.
    let mut burst = HEALTH.repeat(5);
    burst.extend_from_slice(&HEALTH[..10]);
    s.write_all(&burst).await.unwrap();
    let first = read_health_replies(&mut s, 5).await;
    s.write_all(&HEALTH[10..]).await.unwrap();
    s.write_all(b"GET /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    s.write_all(HEALTH).await.unwrap();
    let rest = read_health_replies(&mut s, 2).await;
    assert_eq!(first.matches("HTTP/1.1 200 OK").count(), 5, "{first}");
    let order: Vec<&str> = rest.lines().filter(|l| l.starts_with("HTTP/1.1")).collect();
    assert_eq!(
        order,
        [
            "HTTP/1.1 200 OK",
            "HTTP/1.1 404 Not Found",
            "HTTP/1.1 200 OK"
        ],
        "{rest}"
    );
    assert!(
        !first.contains("close") && !rest.contains("close"),
        "{first}{rest}"
    );
    assert!(rests(&server).await >= 2);
    server.stop().await;
}

#[tokio::test]
async fn below_rest_above_a_connection_keeps_its_session() {
    let server = TestServer::with(resting(2)).await;
    let mut c = server.client().await;
    for _ in 0..5 {
        assert_eq!(c.get("/health").await.text(), "ok\n");
    }
    // Open: `c` and the metrics connection, two, not above 2.
    assert_eq!(rests(&server).await, 0);
    server.stop().await;
}

#[tokio::test]
async fn shutdown_completes_while_connections_rest() {
    let mut server = TestServer::with(resting(0)).await;
    let mut streams = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(server.addr).await.unwrap();
        s.write_all(HEALTH).await.unwrap();
        read_health_replies(&mut s, 1).await;
        streams.push(s);
    }
    assert!(rests(&server).await >= 3);
    server.request_stop();
    for s in &mut streams {
        // Each resting connection is closed by the server: EOF, nothing more sent.
        assert_eq!(read_to_close(s).await, "");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_resting_connection_is_closed_by_the_idle_timeout() {
    let server = TestServer::with(HttpConfig {
        idle_timeout: Duration::from_millis(200),
        ..resting(0)
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(HEALTH).await.unwrap();
    read_health_replies(&mut s, 1).await;
    assert_eq!(read_to_close(&mut s).await, "");
    let m = server.metrics().await;
    assert!(metric(&m, "wsbench_http_connection_rests_total") >= 1);
    assert_eq!(metric(&m, "wsbench_http_connections_idle_closed_total"), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_head_begun_after_a_rest_is_bounded_by_the_header_timeout() {
    let server = TestServer::with(HttpConfig {
        header_timeout: Duration::from_millis(200),
        ..resting(0)
    })
    .await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(HEALTH).await.unwrap();
    read_health_replies(&mut s, 1).await;
    // The next head starts a fresh session and never completes.
    s.write_all(b"GET /health HT").await.unwrap();
    let tail = read_to_close(&mut s).await;
    assert!(!tail.contains("200 OK"), "{tail}");
    let m = server.metrics().await;
    assert_eq!(
        metric(&m, "wsbench_http_connections_header_timeout_total"),
        1
    );
    server.stop().await;
}
